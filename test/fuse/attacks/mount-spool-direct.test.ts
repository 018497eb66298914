// The local copy of sent parts (fuse/fs/spool.ts, StagingFile.writeThrough) is written with
// O_DIRECT where the cache disk takes it, through the page cache elsewhere. Whatever the cache
// disk, a file written out of order (seek back to odd offsets, truncate across part and block
// boundaries, sparse writes, threads, O_APPEND, mmap, fsync between, reads of sent bytes) must
// reach the bucket byte for byte as written (docs/SEMANTICS.md, "write, everything else"), and the
// cache disk must hold no staging file once the writer has closed.

import { GetObjectCommand } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { s3Client } from '../../helpers/s3-smoke.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';

afterAll(runTeardowns);

const SCRIPT = new URL('./mount-spool-patterns.py', import.meta.url).pathname;
const PATTERNS = [
  'seekback:1', 'seekback:4095', 'seekback:4097', 'seekback:5242881', 'truncate-across', 'sparse',
  'fsync-between', 'threads', 'append', 'mmap', 'readback',
];

const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');

/** A loop-mounted file system of `type` with `sector`-byte logical blocks, gone at teardown. */
async function loopDisk(mkfs: string, sector: number, mb: number): Promise<string> {
  const dir = await tempDir('estuary-loopfs-');
  const img = join(dir, 'img');
  const mnt = join(dir, 'mnt');
  const r = await sh(
    `set -e; truncate -s ${mb}M '${img}'; dev=$(losetup -f --show --sector-size ${sector} '${img}'); echo $dev > '${dir}/dev';` +
      ` ${mkfs} $dev >/dev/null 2>&1; mkdir '${mnt}'; mount $dev '${mnt}'; blockdev --getss $dev`,
  );
  onTeardown(async () => {
    await sh(`umount -l '${mnt}' 2>/dev/null; losetup -d $(cat '${dir}/dev') 2>/dev/null; rm -f '${img}'`);
  });
  if (r.code !== 0) throw new Error(r.out);
  expect(r.out.trim()).toBe(String(sector));
  return mnt;
}

async function tmpfs(): Promise<string> {
  const dir = await tempDir('estuary-tmpfs-');
  const r = await sh(`mount -t tmpfs -o size=256m tmpfs '${dir}'`);
  onTeardown(async () => {
    await sh(`umount -l '${dir}'`);
  });
  if (r.code !== 0) throw new Error(r.out);
  return dir;
}

const fuse = fuseAvailable();

async function checkAll(cacheDir: string) {
  const server = await startS3rver({ buckets: ['data'] });
  const m = await mountBucket(server, 'data', ['--cache-dir', cacheDir, '--part-size', '5MiB', '--upload-concurrency', '2']);
  const refs = await tempDir('estuary-refs-');
  const s3 = s3Client(server);
  const bad: string[] = [];
  for (const p of PATTERNS) {
    const name = p.replace(':', '-');
    const r = await sh(`python3 '${SCRIPT}' '${m.dir}/${name}' '${refs}/${name}' '${p}'`);
    if (r.code !== 0) {
      bad.push(`${p}: writer failed: ${r.out.trim().split('\n').at(-1)}`);
      continue;
    }
    const want = await readFile(join(refs, name));
    const got = await s3
      .send(new GetObjectCommand({ Bucket: 'data', Key: name }))
      .then(async (o) => Buffer.from(await o.Body!.transformToByteArray()));
    if (got.length !== want.length || md5(got) !== md5(want)) {
      let first = 0;
      while (first < Math.min(got.length, want.length) && got[first] === want[first]) first++;
      bad.push(`${p}: bucket has ${got.length} bytes (md5 ${md5(got)}), wrote ${want.length}; first difference at ${first}`);
    }
    const read = await readFile(join(m.dir, name));
    if (md5(read) !== md5(want)) bad.push(`${p}: a read through the mount differs from what was written`);
  }
  expect(bad).toEqual([]);
  const left = (await sh(`find '${cacheDir}' -regextype posix-extended -regex '.*/staging-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}' -type f`)).out.trim();
  expect(left, 'staging files left after every writer closed').toBe('');
}

describe.runIf(fuse.ok)('mount: the direct-I/O local copy, on every kind of cache disk', () => {
  it('ext4 on the root disk (direct I/O taken)', async () => {
    await checkAll(await tempDir('estuary-cache-'));
  }, 60_000);
  it('tmpfs (no O_DIRECT)', async () => {
    await checkAll(await tmpfs());
  }, 60_000);
  it('ext4 on a loop device with 512-byte logical blocks', async () => {
    await checkAll(await loopDisk('mkfs.ext4 -q -b 1024', 512, 256));
  }, 60_000);
  it('ext4 on a loop device with 4 KiB logical blocks', async () => {
    await checkAll(await loopDisk('mkfs.ext4 -q', 4096, 256));
  }, 60_000);
});
