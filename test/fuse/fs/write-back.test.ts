import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile as readFileText, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FaultInjectingClient } from '../../../fuse/s3/fault-client.ts';
import { MemoryObjectClient } from '../../../fuse/s3/memory-client.ts';
import { type Operation, WrappingClient } from '../../../fuse/s3/wrapping-client.ts';
import { startChild } from '../../helpers/process.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { holdLock, pidNamespaces } from './lock-holder.ts';
import { MiB, makeFs, readFile, writeFile as writeFsFile } from './make-fs.ts';

const jitter = () => new Promise((r) => setTimeout(r, Math.random() * 3));

/** Uploads that take a random 0–3 ms, so their ends fall anywhere among other operations. */
class JitterClient extends WrappingClient {
  protected async before(op: Operation): Promise<void> {
    if (op === 'put') await jitter();
  }
}

describe('write-back journal', () => {
  it('acknowledges close from local disk, serves the file, and uploads once the store is back', async () => {
    const mem = new MemoryObjectClient();
    const faults = new FaultInjectingClient(mem);
    const fs = await makeFs(faults, { writeBack: true });
    faults.fail('put', 'unavailable', Number.POSITIVE_INFINITY);
    faults.fail('createMultipart', 'unavailable', Number.POSITIVE_INFINITY);
    const data = randomBytes(12 * MiB);
    await writeFsFile(fs, '/wb', data);
    expect(mem.objects.has('wb')).toBe(false);
    expect((await fs.getattr('/wb')).size).toBe(data.length);
    expect((await fs.readdir('/')).map((e) => e.name)).toContain('wb');
    expect((await readFile(fs, '/wb')).equals(data)).toBe(true);
    faults.clear();
    await fs.journalSettled();
    expect(mem.objects.get('wb')?.body.equals(data)).toBe(true);
  });

  it('resumes uploads after a crash, from what the journal left on disk', async () => {
    const cacheDir = await tempDir('estuary-journal-');
    const mem = new MemoryObjectClient();
    const faults = new FaultInjectingClient(mem);
    const first = await makeFs(faults, { writeBack: true, cacheDir });
    faults.fail('*', 'unavailable', Number.POSITIVE_INFINITY);
    await writeFsFile(first, '/a', Buffer.from('one'));
    await writeFsFile(first, '/b', Buffer.from('two'));
    first.journal!.stop();
    expect((await readdir(join(cacheDir, 'journal'))).filter((n) => n.endsWith('.json'))).toHaveLength(2);

    const second = await makeFs(mem, { writeBack: true, cacheDir });
    await second.journalSettled();
    expect(mem.objects.get('a')?.body.toString()).toBe('one');
    expect(mem.objects.get('b')?.body.toString()).toBe('two');
    expect(await readdir(join(cacheDir, 'journal'))).toEqual(['lock.lock', 'lock.lock-journal', 'lock.pid']);
    await second.journal!.close();
    // The lock file stays: unlinked, a process that had it open could hold a lock nobody sees.
    expect(await readdir(join(cacheDir, 'journal'))).toEqual(['lock.lock']);
  });

  for (const ownPidNamespace of pidNamespaces ? [false, true] : [false]) {
    it(`refuses a journal another running process owns${ownPidNamespace ? ' in another PID namespace' : ''}, and takes over one whose owner died`, async () => {
      const cacheDir = await tempDir('estuary-journal-');
      const owner = await holdLock(join(cacheDir, 'journal'), 'lock', ownPidNamespace);
      await expect(makeFs(new MemoryObjectClient(), { writeBack: true, cacheDir })).rejects.toThrow(
        // Its PID, seen from here, would name some other process.
        ownPidNamespace
          ? /the write-back journal .* is in use by another mount; give each mount its own --cache-dir/
          : new RegExp(`the write-back journal .* is in use by process ${owner.pid}; give each mount its own --cache-dir`),
      );
      await owner.stop('SIGKILL');
      const fs = await makeFs(new MemoryObjectClient(), { writeBack: true, cacheDir });
      expect((await readFileText(join(cacheDir, 'journal', 'lock.pid'), 'utf8')).split('\n')[0]).toBe(String(process.pid));
      await fs.journal!.close();
    });
  }

  it("takes over an older release's PID lock file once its process is gone, and removes it", async () => {
    const cacheDir = await tempDir('estuary-journal-');
    await mkdir(join(cacheDir, 'journal'));
    const owner = startChild('sleep', ['60']);
    await writeFile(join(cacheDir, 'journal', 'lock'), `${owner.pid}\n`);
    // While it runs (an older release's mount during an upgrade), the journal is its.
    await expect(makeFs(new MemoryObjectClient(), { writeBack: true, cacheDir })).rejects.toMatchObject({
      code: 'ESTUARY_FS_JOURNAL_IN_USE',
    });
    expect(await readFileText(join(cacheDir, 'journal', 'lock'), 'utf8')).toBe(`${owner.pid}\n`);
    await owner.stop('SIGKILL');
    const fs = await makeFs(new MemoryObjectClient(), { writeBack: true, cacheDir });
    expect(await readdir(join(cacheDir, 'journal'))).toEqual(['lock.lock', 'lock.lock-journal', 'lock.pid']);
    await fs.journal!.close();
  });

  it('uploads only the newest version and appends to a journaled file', async () => {
    const mem = new MemoryObjectClient();
    const faults = new FaultInjectingClient(mem);
    const fs = await makeFs(faults, { writeBack: true });
    faults.fail('put', 'unavailable', Number.POSITIVE_INFINITY);
    await writeFsFile(fs, '/v', Buffer.from('first'));
    await writeFsFile(fs, '/v', Buffer.from('second'));
    const fh = await fs.open('/v', 1);
    await fs.write(fh, Buffer.from('+more'), 6);
    await fs.flush(fh);
    await fs.release(fh);
    faults.clear();
    await fs.journalSettled();
    expect(mem.objects.get('v')?.body.toString()).toBe('second+more');
    expect(mem.calls.get('put')).toBe(1);
  });

  it('serves a file reopened while its upload finishes: never ENOENT, never EIO (stress)', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(new JitterClient(mem), { writeBack: true });
    let failures = 0;
    for (let i = 0; i < 120; i++) {
      const text = `version ${i}`;
      await writeFsFile(fs, '/r', Buffer.from(text));
      // Two openers race the upload that this close started: a reader, and a writer that appends
      // (which starts from a copy of the journaled content).
      const results = await Promise.allSettled([
        jitter().then(() => readFile(fs, '/r')),
        (async () => {
          await jitter();
          const fh = await fs.open('/r', 2);
          try {
            await fs.write(fh, Buffer.from('+'), text.length);
            await fs.flush(fh);
          } finally {
            await fs.release(fh);
          }
        })(),
      ]);
      for (const r of results) if (r.status === 'rejected') failures++;
      const read = results[0].status === 'fulfilled' ? results[0].value.toString() : '';
      expect([text, `${text}+`]).toContain(read);
      expect((await readFile(fs, '/r')).toString()).toBe(`${text}+`);
    }
    expect(failures).toBe(0);
    await fs.journalSettled();
    expect(mem.objects.get('r')?.body.toString()).toBe('version 119+');
  });
});
