// A full cache disk while a stream keeps its local copy (fuse/fs/spool.ts) with direct I/O.
// docs/SEMANTICS.md, "write, everything else": "a full cache disk gives ENOSPC", and a full cache
// disk "drops the copy as past the limit does" — the stream goes on unchanged, a write out of
// order is refused. Expected: sequential writes and close succeed and the bucket has every byte
// of them; the write that needed the copy gets ENOSPC (or EFBIG), and nothing else is lost. A
// writer that got ENOSPC while its file was staged must not have a half-written file published in
// place of the object by its close() without being told so (close answers an error). No staging
// file is left on the disk afterwards.

import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { s3Client } from '../../helpers/s3-smoke.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';

afterAll(runTeardowns);

const SCRIPT = new URL('./mount-spool-full-disk.py', import.meta.url).pathname;
const MiB = 2 ** 20;

/** A small ext4 on a loop device, gone at teardown. */
async function smallDisk(mb: number): Promise<string> {
  const dir = await tempDir('estuary-fulldisk-');
  const img = join(dir, 'img');
  const mnt = join(dir, 'mnt');
  const r = await sh(
    `set -e; truncate -s ${mb}M '${img}'; dev=$(losetup -f --show '${img}'); echo $dev > '${dir}/dev';` +
      ` mkfs.ext4 -q -m 0 $dev >/dev/null 2>&1; mkdir '${mnt}'; mount $dev '${mnt}'`,
  );
  onTeardown(async () => {
    await sh(`umount -l '${mnt}' 2>/dev/null; losetup -d $(cat '${dir}/dev') 2>/dev/null; rm -f '${img}'`);
  });
  if (r.code !== 0) throw new Error(r.out);
  return mnt;
}

function blk(n: number, seed: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < 256; i++) b[i] = (i * 31 + seed) & 0xff;
  for (let at = 256; at + 256 <= n; at += 256) b.copy(b, at, 0, 256);
  return b;
}
const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');

const fuse = fuseAvailable();

describe.runIf(fuse.ok)('mount: the local copy on a full cache disk', () => {
  it('a stream goes on when the copy meets ENOSPC; the write out of order gets an errno; the bucket has every sequential byte', async () => {
    const server = await startS3rver({ buckets: ['data'] });
    const cache = await smallDisk(24);
    const m = await mountBucket(server, 'data', ['--cache-dir', cache, '--part-size', '5MiB']);
    const r = await sh(`python3 '${SCRIPT}' '${m.dir}/f' seq-then-seekback`);
    expect(r.code, r.out).toBe(0);
    const got = JSON.parse(r.out.trim().split('\n').at(-1)!) as Record<string, string>;
    expect(got.sequential).toBe('ok');
    expect(['No space left on device', 'File too large']).toContain(got.seekback);
    expect(got.close).toBe('ok');
    const body = await s3Client(server)
      .send(new GetObjectCommand({ Bucket: 'data', Key: 'f' }))
      .then(async (o) => Buffer.from(await o.Body!.transformToByteArray()));
    const want = Buffer.concat(Array.from({ length: 40 }, (_, i) => blk(MiB, i)));
    expect(body.length).toBe(want.length);
    expect(md5(body)).toBe(md5(want));
    const left = (await sh(`find '${cache}' -name 'staging-*-*-*-*-*' -type f | grep -v '\\.lock\\|\\.pid'`)).out.trim();
    expect(left).toBe('');
  }, 60_000);

  it('a staged file that meets ENOSPC is not published half-written behind the writer’s back', async () => {
    const server = await startS3rver({ buckets: ['data'] });
    const old = blk(3 * MiB, 7);
    await s3Client(server).send(new PutObjectCommand({ Bucket: 'data', Key: 'f', Body: old }));
    const cache = await smallDisk(24);
    const m = await mountBucket(server, 'data', ['--cache-dir', cache, '--part-size', '5MiB']);
    const r = await sh(`python3 '${SCRIPT}' '${m.dir}/f' staged-then-grow`);
    expect(r.code, r.out).toBe(0);
    const got = JSON.parse(r.out.trim().split('\n').at(-1)!) as Record<string, string>;
    expect(got.first).toBe('ok');
    expect(got.seekback).toBe('ok');
    expect(got.more).toBe('No space left on device');
    const body = await s3Client(server)
      .send(new GetObjectCommand({ Bucket: 'data', Key: 'f' }))
      .then(async (o) => Buffer.from(await o.Body!.transformToByteArray()));
    // Either close() said it failed and the old object stands, or close() succeeded: then the
    // writer was told of every lost byte by write() already, and what is there is what it wrote.
    if (got.close === 'ok') {
      expect(body.length, 'close() succeeded: the file as the writer left it').toBeGreaterThanOrEqual(11 * MiB);
    } else {
      expect(md5(body), 'close() failed: the old object stands').toBe(md5(old));
    }
    const left = (await sh(`find '${cache}' -name 'staging-*-*-*-*-*' -type f | grep -v '\\.lock\\|\\.pid'`)).out.trim();
    expect(left).toBe('');
  }, 60_000);
});
