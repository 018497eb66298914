// Removed open files meet directories, several descriptors and races, through a real mount over
// MinIO (and a reader of an object in parts over Swift): the hidden name libfuse gives a removed
// open file lives only in the mount (docs/SEMANTICS.md, "unlink."), so it must never hold a
// directory up, follow it into a bucket key, or outlive its file.

import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { startSwift, swiftAvailable } from '../../helpers/swift.ts';
import type { S3Server } from '../../helpers/s3rver.ts';
import { fuseAvailable, sh } from '../mount-helpers.ts';
import { freshMount, MiB, ops, opsResult, sha256 } from './hidden-harness.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();
const minio = await minioAvailable();
const swift = await swiftAvailable();

describe.skipIf(!fuse.ok || !minio.ok)('removed open files, directories and races (MinIO)', () => {
  let m: Awaited<ReturnType<typeof freshMount>>;
  beforeAll(async () => {
    const server = await startMinio();
    m = await freshMount(server, ['--part-size', '5MiB']);
  }, 30_000);

  it('rm -r of a directory whose only file is open: the directory goes, as on a local filesystem', async () => {
    // SEMANTICS "mkdir / rmdir.": rmdir refuses a directory "that holds any object"; a removed
    // open file is no object (its hidden name "exists only in this mount"). ext4, tmpfs and
    // every local filesystem remove the directory here; `rm -rf build/` under a running tool must too.
    const { bucket, mnt } = m;
    await sh(`mkdir '${join(mnt.dir, 'd1')}' && echo hi > '${join(mnt.dir, 'd1', 'f')}'`);
    const holder = await ops(['hold-open', join(mnt.dir, 'd1', 'f'), 'w']);
    await holder.reached('open');
    const rm = await sh(`rm -r '${join(mnt.dir, 'd1')}'`);
    await holder.open('open');
    await holder.open('release');
    const r = await holder.result();
    expect(rm).toMatchObject({ code: 0 });
    expect(r).toMatchObject({ write_err: null, close_err: null });
    expect((await bucket.keys()).filter((k) => k.startsWith('d1'))).toEqual([]);
  }, 20_000);

  it('a directory renamed while a removed file in it is open: no key and no ghost entry follows it', async () => {
    const { bucket, mnt } = m;
    await sh(`mkdir '${join(mnt.dir, 'd2')}' && echo hi > '${join(mnt.dir, 'd2', 'f')}' && echo keep > '${join(mnt.dir, 'd2', 'g')}'`);
    const holder = await ops(['hold-open', join(mnt.dir, 'd2', 'f'), 'w']);
    await holder.reached('open');
    expect((await sh(`rm '${join(mnt.dir, 'd2', 'f')}'`)).code).toBe(0);
    const hiddenName = (await sh(`ls -a '${join(mnt.dir, 'd2')}'`)).out;
    expect((await sh(`mv '${join(mnt.dir, 'd2')}' '${join(mnt.dir, 'e2')}'`)).code).toBe(0);
    await holder.open('open');
    await holder.open('release');
    const r = await holder.result();
    expect(r).toMatchObject({ write_err: null, close_err: null });
    expect(hiddenName).not.toMatch(/fuse_hidden/);
    await new Promise((res) => setTimeout(res, 500));
    expect((await bucket.keys()).filter((k) => k.startsWith('d2') || k.startsWith('e2'))).toEqual(['e2/', 'e2/g']);
    // The directory made again under the old name holds nothing.
    await sh(`mkdir '${join(mnt.dir, 'd2')}'`);
    const ghosts = await sh(`ls -a '${join(mnt.dir, 'd2')}' '${join(mnt.dir, 'e2')}'; stat -c %n '${join(mnt.dir, 'd2')}'/.fuse_hidden* '${join(mnt.dir, 'e2')}'/.fuse_hidden* 2>/dev/null`);
    expect(ghosts.out).not.toMatch(/fuse_hidden/);
  }, 20_000);

  it('two writable descriptors and a reader, the file removed: every descriptor sees the same content', async () => {
    // SEMANTICS "unlink.": it "stays readable and writable through its descriptors until then, as
    // a local file does"; descriptors of one file share its content (Reads.open).
    const { bucket, mnt } = m;
    const size = 3 * MiB;
    await bucket.put('shared', Buffer.alloc(size, 0x61));
    const r = await opsResult(['two-and-reader', join(mnt.dir, 'shared'), String(size)]);
    expect(r).toMatchObject({ exists_after_unlink: false, w2_write_err: null, w1_sees_all: true, close_errs: [null, null, null] });
    // A reader opened before the removal reads on; what it sees may be the file as written
    // (a local filesystem) or as opened (documented for readers), never something else.
    expect(['all', 'old']).toContain(r.reader_sees);
    expect(await bucket.keys()).not.toContain('shared');
  }, 20_000);

  for (const [rounds, size] of [
    [15, 200_000],
    [3, 24 * MiB],
  ] as const) {
    it(`close() and unlink() of a fresh file of ${size} bytes at the same moment, ${rounds} times: the file never stays`, async () => {
      const { bucket, mnt } = m;
      const name = `racer-${size}`;
      const r = await opsResult(['race', join(mnt.dir, name), String(rounds), String(size)]);
      expect(r.unlink_errs).toEqual(Array(rounds).fill(null));
      expect(r.close_errs).toEqual(Array(rounds).fill(null));
      expect(r.exists).toBe(false);
      await new Promise((res) => setTimeout(res, 500));
      expect((await bucket.keys()).filter((k) => k.includes('racer') || k.includes('fuse_hidden'))).toEqual([]);
      expect(await bucket.uploads()).toEqual([]);
    }, 40_000);
  }
});

describe.skipIf(!fuse.ok || !swift.ok)('a reader of an object in parts (Swift)', () => {
  let m: Awaited<ReturnType<typeof freshMount>>;
  beforeAll(async () => {
    const server: S3Server = await startSwift();
    m = await freshMount(server, ['--part-size', '5MiB']);
  }, 30_000);

  it('removed and then replaced by mv while a reader holds it: the reader reads the old bytes whole', async () => {
    // SEMANTICS "unlink.": a file "replaced by a rename over it while open for reading stays
    // readable through that handle": the old bytes, never a mix with the new file.
    const { bucket, mnt } = m;
    const old = Buffer.alloc(12 * MiB, 0x71);
    await bucket.putMultipart('slo', old);
    await bucket.put('newer', Buffer.alloc(12 * MiB, 0x72));
    const script = `
import os, hashlib, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
a = os.pread(fd, 4 << 20, 0)
print('STEP half', flush=True)
while not os.path.exists(sys.argv[2]): time.sleep(0.05)
h = hashlib.sha256(a)
off = len(a)
while True:
    b = os.pread(fd, 1 << 20, off)
    if not b: break
    h.update(b); off += len(b)
print('RESULT {"sha": "%s", "n": %d}' % (h.hexdigest(), off), flush=True)
`;
    const gate = join(mnt.dir, '..', `gate-${process.pid}`);
    const { startChild } = await import('../../helpers/process.ts');
    const reader = startChild('python3', ['-c', script, join(mnt.dir, 'slo'), gate]);
    await reader.waitFor(/^STEP half$/m, 20_000);
    expect((await sh(`mv '${join(mnt.dir, 'newer')}' '${join(mnt.dir, 'slo')}'`)).code).toBe(0);
    await sh(`touch '${gate}'`);
    const m2 = await reader.waitFor(/^RESULT (\{.*\})$/m, 30_000);
    await sh(`rm -f '${gate}'`);
    expect(JSON.parse(m2[1]!)).toEqual({ sha: sha256(old), n: old.length });
    expect(await readdir(mnt.dir)).toContain('slo');
  }, 40_000);
});
