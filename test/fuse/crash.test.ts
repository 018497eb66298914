// kill -9 of the mount while a file is being overwritten or written for the first time, at
// several points, with and without --write-back: afterwards the bucket must hold exactly the old
// object or the new one (the new one only once close() had returned), never an empty, truncated
// or partial object. A second process opens the file while it is being written, as `cat` or a
// backup would, and must see the writer's data without it reaching the bucket.

import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../helpers/cleanup.ts';
import { NODE, startChild } from '../helpers/process.ts';
import { type S3rverServer, startS3rver } from '../helpers/s3rver.ts';
import { startSwift, swiftAvailable } from '../helpers/swift.ts';
import { tempDir } from '../helpers/tmp.ts';
import { fuseAvailable, mountBucket, sh } from './mount-helpers.ts';
import { storeClient } from './s3/client.ts';

afterAll(runTeardowns);

const md5 = (b: Buffer | undefined) => (b ? createHash('md5').update(b).digest('hex') : 'none');
const MiB = 2 ** 20;
/** Past the first 16 MiB part, so a multipart upload is under way when the mount dies. */
const BIG = 20 * MiB;
const SMALL = 1000;

/** Where the writer stands when the mount is killed; each prints its name once there. */
const POINTS = ['opened', 'small', 'big', 'closed'] as const;
type Point = (typeof POINTS)[number];

describe.runIf(fuseAvailable().ok)('a mount killed with -9 mid-write', () => {
  let server: S3rverServer;
  let local: string;
  let fresh: Buffer;
  const old = randomBytes(3000);

  beforeAll(async () => {
    server = await startS3rver({ buckets: ['crash'] });
    local = await tempDir('estuary-crash-');
    fresh = randomBytes(SMALL + BIG);
    await writeFile(join(local, 'new.bin'), fresh);
  });

  /**
   * Opens `name` with O_TRUNC in the mount, writes new.bin up to `point`, says so and waits. One
   * process with one descriptor: a shell's `cmd >&3` closes a copy of the descriptor when `cmd`
   * exits, and every close(2) is a flush that publishes the file.
   */
  function writer(mnt: string, name: string, point: Point) {
    const steps = POINTS.indexOf(point);
    const script = `
      const fs = require('node:fs');
      const data = fs.readFileSync('new.bin');
      const fd = fs.openSync(${JSON.stringify(`${mnt}/${name}`)}, 'w');
      const put = (b, at) => { for (let o = 0; o < b.length; ) o += fs.writeSync(fd, b, o, b.length - o, at + o); };
      if (${steps} >= 1) put(data.subarray(0, ${SMALL}), 0);
      if (${steps} >= 2) put(data.subarray(${SMALL}), ${SMALL});
      if (${steps} >= 3) fs.closeSync(fd);
      console.log(${JSON.stringify(point)});
      setTimeout(() => {}, 60000);`;
    return startChild(NODE, ['-e', script], { cwd: local });
  }

  async function crashAt(point: Point, name: string, extra: readonly string[]) {
    const m = await mountBucket(server, 'crash', extra);
    const w = writer(m.dir, name, point);
    await w.waitFor(new RegExp(`^${point}$`, 'm'), 30_000);
    let seen: Buffer | undefined;
    if (point !== 'closed') {
      // A second opener while the writer holds the file: it sees the writer's bytes so far, and
      // publishes nothing; or, when the writer's first parts are already uploading, gets EBUSY.
      const r = await sh(`cat '${m.dir}/${name}' > '${local}/seen'`);
      if (r.code === 0) seen = await readFile(join(local, 'seen'));
      else expect(r.out).toMatch(/Device or resource busy/);
    } else {
      // Long enough for a write-back upload to have started, not necessarily finished.
      await new Promise((r) => setTimeout(r, 50));
    }
    await m.child.stop('SIGKILL');
    await w.stop('SIGKILL');
    await sh(`fusermount -uz '${m.dir}'`);
    return seen;
  }

  for (const mode of ['default', 'write-back'] as const) {
    it(`leaves the old object or the new, never a third, at every point (${mode})`, async () => {
      const cacheDir = await tempDir('estuary-crash-cache-');
      const extra = mode === 'write-back' ? ['--write-back', '--cache-dir', cacheDir] : [];
      const client = storeClient(server, 'crash');
      for (const point of POINTS) {
        const name = `${mode}-${point}`;
        await client.put(name, old);
        const seen = await crashAt(point, name, extra);
        if (mode === 'write-back') {
          // The restart uploads what the journal acknowledged, and exits once it is empty.
          const again = await mountBucket(server, 'crash', extra);
          const code = await again.child.stop('SIGTERM', 30_000);
          expect(code, `${again.child.proc.signalCode} ${again.child.output()}`).toBe(0);
          await sh(`fusermount -uz '${again.dir}'`);
          // The killed mount's staging file (its content so far) is removed, and said so.
          if (point === 'big') expect(again.child.output()).toMatch(/removed staging files left by a mount/);
          expect((await readdir(cacheDir)).filter((n) => n.startsWith('staging-'))).toEqual([]);
        }
        const stored = await client.get(name).catch(() => undefined);
        const expected = point === 'closed' ? fresh : old;
        expect(md5(stored), `${name}: bucket holds ${stored?.length} bytes`).toBe(md5(expected));
        if (point === 'opened') expect(seen?.length).toBe(0);
        if (point === 'small') expect(md5(seen)).toBe(md5(fresh.subarray(0, SMALL)));
        if (point === 'big') expect(md5(seen)).toBe(mode === 'default' ? 'none' : md5(fresh));
      }
    }, 120_000);

    it(`leaves no object for a new file killed before close (${mode})`, async () => {
      const cacheDir = await tempDir('estuary-crash-cache-');
      const extra = mode === 'write-back' ? ['--write-back', '--cache-dir', cacheDir] : [];
      const client = storeClient(server, 'crash');
      for (const point of ['opened', 'small', 'big'] as const) {
        const name = `${mode}-fresh-${point}`;
        await crashAt(point, name, extra);
        if (mode === 'write-back') {
          const again = await mountBucket(server, 'crash', extra);
          expect(await again.child.stop('SIGTERM', 30_000), again.child.output()).toBe(0);
          await sh(`fusermount -uz '${again.dir}'`);
        }
        expect(await client.head(name), name).toBeUndefined();
      }
    }, 120_000);
  }
});

describe.runIf(fuseAvailable().ok)('a mount killed with -9 after a writer sought back into streamed bytes', () => {
  /**
   * Streams 20 MiB into `name` (past the first part, so parts are uploading), seeks back to 5 MiB,
   * writes 64 KiB, goes on at the end, says so and waits without closing.
   */
  function seekingWriter(mnt: string, name: string, local: string) {
    const script = `
      const fs = require('node:fs');
      const data = fs.readFileSync('stream.bin');
      const fd = fs.openSync(${JSON.stringify(`${mnt}/${name}`)}, 'w');
      const put = (b, at) => { for (let o = 0; o < b.length; ) o += fs.writeSync(fd, b, o, b.length - o, at + o); };
      put(data.subarray(0, ${BIG}), 0);
      put(Buffer.alloc(64 * 1024, 7), 5 * ${MiB});
      put(data.subarray(${BIG}), ${BIG});
      console.log('patched');
      setTimeout(() => {}, 60000);`;
    return startChild(NODE, ['-e', script], { cwd: local });
  }

  it('leaves the old 40 MiB object whole, and no object for a new key', async () => {
    const server = await startS3rver({ buckets: ['seek'] });
    const local = await tempDir('estuary-crash-');
    await writeFile(join(local, 'stream.bin'), randomBytes(BIG + MiB));
    const client = storeClient(server, 'seek');
    const old = randomBytes(40 * MiB);
    await client.put('existing.bin', old);
    for (const name of ['existing.bin', 'fresh.bin']) {
      const m = await mountBucket(server, 'seek');
      const w = seekingWriter(m.dir, name, local);
      await w.waitFor(/^patched$/m, 60_000);
      // A second for anything the mount would publish on its own to reach the bucket.
      await new Promise((r) => setTimeout(r, 1000));
      await m.child.stop('SIGKILL');
      await w.stop('SIGKILL');
      await sh(`fusermount -uz '${m.dir}'`);
      const stored = await client.get(name).catch(() => undefined);
      if (name === 'existing.bin') expect(md5(stored), `bucket holds ${stored?.length} bytes`).toBe(md5(old));
      else expect(stored?.length, 'a new key stays absent').toBeUndefined();
    }
  }, 120_000);
});

const swift = await swiftAvailable();

describe.runIf(fuseAvailable().ok && swift.ok)('a mount killed with -9 mid-upload, on Swift', () => {
  it('leaves a multipart upload, which the next start aborts once older than --abort-uploads-after', async () => {
    const server = await startSwift({ buckets: ['crash'] });
    const client = storeClient(server, 'crash');
    const local = await tempDir('estuary-crash-');
    await writeFile(join(local, 'big.bin'), randomBytes(20 * MiB));
    // Someone else's upload outside the mount's prefix must survive.
    const outside = await client.createMultipart('elsewhere/big.bin');
    const extra = ['--abort-uploads-after', '1s'];
    const m = await mountBucket(server, 'crash/run', extra);
    // One descriptor held open past the first 16 MiB part, then the mount dies.
    const script = `const fs = require('node:fs'); const fd = fs.openSync(${JSON.stringify(`${m.dir}/big.bin`)}, 'w');
      fs.writeSync(fd, fs.readFileSync('big.bin')); console.log('written'); setTimeout(() => {}, 60000);`;
    const w = startChild(NODE, ['-e', script], { cwd: local });
    await w.waitFor(/written/, 30_000);
    // The upload starts as the first part leaves, in the background of the writes: on a busy
    // machine the writer can be done before its request has reached the store.
    for (let i = 0; i < 100 && (await client.listUploads('run/')).length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    await m.child.stop('SIGKILL');
    await w.stop('SIGKILL');
    await sh(`fusermount -uz '${m.dir}'`);
    expect((await client.listUploads('run/')).map((u) => u.key)).toEqual(['run/big.bin']);
    expect(await client.head('run/big.bin')).toBeUndefined();

    // Swift gives the upload's start in whole seconds, rounded: wait past a second more than that.
    await new Promise((r) => setTimeout(r, 2100));
    const again = await mountBucket(server, 'crash/run', extra);
    await again.child.waitFor(/aborted unfinished multipart uploads left by a mount that died/, 20_000);
    expect(await client.listUploads('run/')).toEqual([]);
    expect((await client.listUploads('elsewhere/')).map((u) => u.uploadId)).toEqual([outside]);
    await client.abortMultipart('elsewhere/big.bin', outside);
    expect(await again.child.stop('SIGTERM', 30_000)).toBe(0);
  }, 90_000);
});
