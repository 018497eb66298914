// Aborts of multipart uploads that failed are tried again (fuse/fs/late-aborts.ts): an rm while
// the server does not answer leaves no unfinished upload behind once it answers again.

import { randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { LateAborts } from '../../../fuse/fs/late-aborts.ts';
import { FaultInjectingClient } from '../../../fuse/s3/fault-client.ts';
import { MemoryObjectClient } from '../../../fuse/s3/memory-client.ts';
import { ObjectError } from '../../../fuse/s3/object-client.ts';
import { MiB, makeFs } from './make-fs.ts';

const quiet = { warn: () => {} };

describe('LateAborts', () => {
  it('tries a failed abort again until it goes, and counts a gone upload as aborted', async () => {
    const mem = new MemoryObjectClient();
    const faults = new FaultInjectingClient(mem);
    const id = await mem.createMultipart('k');
    faults.fail('abortMultipart', 'unavailable', 2);
    const late = new LateAborts(faults, quiet, 10);
    await late.abort('k', id);
    expect(late.size).toBe(1);
    for (let i = 0; i < 100 && late.size > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(late.size).toBe(0);
    expect(await mem.listUploads('')).toEqual([]);
    const gone = new FaultInjectingClient(mem);
    gone.fail('abortMultipart', 'not-found', 1);
    const late2 = new LateAborts(gone, quiet, 10);
    await late2.abort('k', 'no-such-upload');
    expect(late2.size).toBe(0);
  });

  it('gives up after its tries and says so, once per upload', async () => {
    const mem = new MemoryObjectClient();
    const faults = new FaultInjectingClient(mem);
    faults.fail('abortMultipart', 'unavailable', Number.POSITIVE_INFINITY);
    const said: object[] = [];
    const late = new LateAborts(faults, { warn: (o) => said.push(o) }, 5, 3);
    await late.abort('k', 'u1');
    for (let i = 0; i < 100 && late.size > 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(late.size).toBe(0);
    expect(said).toEqual([{ key: 'k', uploadId: 'u1', code: 'ESTUARY_FS_UPLOAD_LEFT' }]);
  });

  it('by default: every 30 s for 10 minutes (docs/SEMANTICS.md)', async () => {
    vi.useFakeTimers();
    try {
      const faults = new FaultInjectingClient(new MemoryObjectClient());
      faults.fail('abortMultipart', 'unavailable', Number.POSITIVE_INFINITY);
      const said: object[] = [];
      const late = new LateAborts(faults, { warn: (o) => said.push(o) });
      await late.abort('k', 'u');
      await vi.advanceTimersByTimeAsync(29_000);
      expect(faults.log.filter((c) => c.op === 'abortMultipart')).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(1_000);
      expect(faults.log.filter((c) => c.op === 'abortMultipart')).toHaveLength(2);
      await vi.advanceTimersByTimeAsync(9 * 60_000 - 1_000);
      expect(late.size).toBe(1);
      await vi.advanceTimersByTimeAsync(60_000);
      expect({ size: late.size, said: said.length, tries: faults.log.length }).toEqual({ size: 0, said: 1, tries: 21 });
    } finally {
      vi.useRealTimers();
    }
  });

  it('drain: one last try of each when the mount stops', async () => {
    const mem = new MemoryObjectClient();
    const faults = new FaultInjectingClient(mem);
    const id = await mem.createMultipart('k');
    faults.fail('abortMultipart', 'unavailable', 1);
    const late = new LateAborts(faults, quiet, 60_000);
    await late.abort('k', id);
    expect(late.size).toBe(1);
    await late.drain();
    expect(late.size).toBe(0);
    expect(await mem.listUploads('')).toEqual([]);
  });
});

describe('an rm of a streamed file while the server refuses the abort', () => {
  it('leaves no unfinished upload once the mount stops', async () => {
    const mem = new MemoryObjectClient();
    const faults = new FaultInjectingClient(mem);
    const fs = await makeFs(faults);
    const fh = await fs.create('/big', 0o644);
    for (let at = 0; at < 40 * MiB; at += MiB) await fs.write(fh, randomBytes(MiB), at);
    expect((await mem.listUploads('')).length).toBe(1);
    faults.fail('abortMultipart', 'unavailable', 1);
    await fs.unlink('/big');
    await fs.release(fh);
    await fs.stop();
    expect(await mem.listUploads('')).toEqual([]);
    expect([...mem.objects.keys()]).toEqual([]);
  });

  it('an abort error never replaces the upload error the writer hears', async () => {
    const mem = new MemoryObjectClient();
    const faults = new FaultInjectingClient(mem);
    const fs = await makeFs(faults);
    faults.fail('uploadPart', 'access-denied', Number.POSITIVE_INFINITY);
    faults.fail('abortMultipart', 'unavailable', Number.POSITIVE_INFINITY);
    const fh = await fs.create('/denied', 0o644);
    let err: unknown;
    try {
      for (let at = 0; at < 40 * MiB; at += MiB) await fs.write(fh, randomBytes(MiB), at);
      await fs.flush(fh);
    } catch (e) {
      err = e;
    }
    expect(err).toBeDefined();
    expect(err instanceof ObjectError && err.kind === 'unavailable').toBe(false);
    await fs.release(fh).catch(() => undefined);
  });
});

describe('LateAborts in the background', () => {
  /** A client whose aborts wait until released, counting how many run at once. */
  function heldClient() {
    const mem = new MemoryObjectClient();
    let running = 0;
    let most = 0;
    const release: (() => void)[] = [];
    const client = Object.create(mem) as MemoryObjectClient;
    client.abortMultipart = async () => {
      running++;
      most = Math.max(most, running);
      await new Promise<void>((r) => release.push(r));
      running--;
    };
    return { client, release, most: () => most };
  }

  it('runs at most two aborts at a time, whoever gives them up', async () => {
    const h = heldClient();
    const late = new LateAborts(h.client, quiet, 60_000);
    const all = Array.from({ length: 6 }, (_, i) => late.abort(`k${i}`, `u${i}`));
    await new Promise((r) => setTimeout(r, 20));
    expect(h.most()).toBe(2);
    while (late.size > 0) {
      h.release.shift()?.();
      await new Promise((r) => setTimeout(r, 5));
    }
    await Promise.all(all);
    expect(h.most()).toBe(2);
  });

  it('drain names what is still under way when its time is up, the id still to come included', async () => {
    const h = heldClient();
    const said: { key: string; uploadId?: string }[] = [];
    const late = new LateAborts(h.client, { warn: (o) => said.push(o as { key: string }) }, 60_000);
    void late.abort('held', 'u1');
    void late.abort('unknown-id', new Promise<string | undefined>(() => undefined));
    const started = Date.now();
    await late.drain(100);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(said.map((o) => o.key).sort()).toEqual(['held', 'unknown-id']);
    expect(late.size).toBe(0);
  });
});
