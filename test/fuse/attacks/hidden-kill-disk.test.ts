// kill -9 of the mount in the middle of removing open files, and a cache disk too small (a tmpfs
// of a few MiB) for the local copies those removals and appends need, through real mounts over
// MinIO and Swift. Every object is compared by SHA-256 with what was written; "nothing in the
// bucket" is checked by another client, unfinished multipart uploads included.

import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { startSwift, swiftAvailable } from '../../helpers/swift.ts';
import type { S3Server } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { Bucket, eventually, freshMount, MiB, ops, sha256 } from './hidden-harness.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();
const minio = await minioAvailable();
const swift = await swiftAvailable();

/** kill -9 of the mount, its dead mountpoint lazily unmounted, and the program using it stopped. */
async function crash(m: Awaited<ReturnType<typeof freshMount>>['mnt'], user?: { child: { stop(s: NodeJS.Signals): Promise<unknown> } }) {
  await m.child.stop('SIGKILL');
  await sh(`fusermount -uz '${m.dir}' || umount -l '${m.dir}'`);
  await user?.child.stop('SIGKILL');
}

/** A tmpfs of `bytes` on a fresh directory, unmounted after the file. */
async function tinyDisk(bytes: number): Promise<string> {
  const dir = await tempDir('estuary-hidtmpfs-');
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir]);
  onTeardown(async () => {
    await sh(`umount '${dir}' || umount -l '${dir}'`);
  });
  return dir;
}

describe.skipIf(!fuse.ok || !minio.ok)('kill -9 while removed files are open (MinIO)', () => {
  let server: S3Server;
  beforeAll(async () => {
    server = await startMinio();
  }, 30_000);

  it('renamed away while rewritten, then removed, then kill -9: the old name does not come back', async () => {
    // SEMANTICS "unlink.": "nothing of the file is in the bucket under any name meanwhile, nor
    // after a crash". The user renamed ra to rb and removed rb: neither may be in the bucket.
    const { bucket, mnt } = await freshMount(server, ['--part-size', '5MiB']);
    await bucket.put('ra', Buffer.from('old content of ra'));
    const run = await ops(['renamed-then-removed', join(mnt.dir, 'ra'), join(mnt.dir, 'rb'), String(1 * MiB)]);
    await run.reached('removed');
    await crash(mnt, run);
    const again = await mountBucket(server, bucket.name, ['--cache-dir', await tempDir('estuary-hidcache-'), '--cache-ttl', '0s']);
    expect(await bucket.keys()).toEqual([]);
    await sh(`ls '${again.dir}'`);
  }, 30_000);

  it('a stream of several parts removed while open, then kill -9: no object, and the next start aborts its upload', async () => {
    const { bucket, mnt } = await freshMount(server, ['--part-size', '5MiB']);
    const run = await ops(['writer', join(mnt.dir, 'w'), '8', String(4 * MiB), '80']);
    await run.reached('first');
    await run.open('first');
    // Parts have left (past the first 16 MiB buffer) when the file is removed.
    await eventually(async () => (await bucket.uploads()).includes('w'), 20_000);
    expect((await sh(`rm '${join(mnt.dir, 'w')}'`)).code).toBe(0);
    await run.reached('before-close');
    await crash(mnt, run);
    await mountBucket(server, bucket.name, ['--cache-dir', await tempDir('estuary-hidcache-'), '--abort-uploads-after', '1ms']);
    expect(await bucket.keys()).toEqual([]);
    expect(await eventually(async () => (await bucket.uploads()).length === 0, 5000)).toBe(true);
  }, 40_000);

  it('--write-back: a file written and removed while open, then kill -9: the journal does not bring it back', async () => {
    const cache = await tempDir('estuary-hidcache-');
    const bucket = new Bucket(server, `hidwb-${process.pid}`);
    await bucket.create();
    const mnt = await mountBucket(server, bucket.name, ['--cache-dir', cache, '--cache-ttl', '0s', '--write-back']);
    const run = await ops(['tmpfile', join(mnt.dir, 'j'), String(3 * MiB), String(1 * MiB)]);
    await run.reached('unlinked');
    await run.open('unlinked');
    await run.reached('before-close');
    await crash(mnt, run);
    await mountBucket(server, bucket.name, ['--cache-dir', cache, '--cache-ttl', '0s', '--write-back']);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await bucket.keys()).toEqual([]);
  }, 30_000);
});

function diskSuite(kind: string, available: () => boolean, start: () => Promise<S3Server>) {
  describe.skipIf(!fuse.ok || !available())(`a cache disk too small for the copies (${kind})`, () => {
    let server: S3Server;
    beforeAll(async () => {
      server = await start();
    }, 30_000);

    const mountOnTiny = async () => {
      const disk = await tinyDisk(2 * MiB);
      return freshMount(server, ['--part-size', '5MiB', '--cache-dir', join(disk, 'c')]);
    };

    it('an existing object in parts, appended with O_APPEND: the object is the old bytes then the new', async () => {
      // SEMANTICS "write, everything else": "The same holds for an append to an existing object
      // opened for writing when the cache disk fails to take its copy" (it goes on as a stream).
      const { bucket, mnt } = await mountOnTiny();
      const old = Buffer.alloc(12 * MiB, 0x41);
      await bucket.putMultipart('mp', old);
      const run = await ops(['append-existing', join(mnt.dir, 'mp'), String(1 * MiB)], false);
      const r = await run.result();
      expect(r).toMatchObject({ size_at_open: old.length, append_err: null, close_err: null });
      const body = await bucket.body('mp');
      expect(body?.length).toBe(13 * MiB);
      expect(sha256(body!.subarray(0, old.length))).toBe(sha256(old));
    }, 30_000);

    it('the same append with the object replaced by another client after open: theirs stands, never mixed', async () => {
      const { bucket, mnt } = await mountOnTiny();
      await bucket.putMultipart('mq', Buffer.alloc(12 * MiB, 0x41));
      const run = await ops(['append-existing', join(mnt.dir, 'mq'), String(1 * MiB)]);
      await run.reached('opened');
      const theirs = Buffer.alloc(12 * MiB, 0x42);
      await bucket.putMultipart('mq', theirs);
      await run.open('opened');
      const r = await run.result();
      expect(await bucket.sha('mq')).toBe(sha256(theirs));
      expect(r.append_err ?? r.close_err).not.toBe(null);
    }, 30_000);

    it('an existing object removed while open for writing: writes taken, close succeeds, nothing in the bucket', async () => {
      const { bucket, mnt } = await mountOnTiny();
      await bucket.put('gone', Buffer.alloc(6 * MiB, 0x43));
      const holder = await ops(['hold-open', join(mnt.dir, 'gone'), 'w']);
      await holder.reached('open');
      expect((await sh(`rm '${join(mnt.dir, 'gone')}'`)).code).toBe(0);
      await holder.open('open');
      await holder.open('release');
      const r = await holder.result();
      expect(r).toMatchObject({ write_err: null, close_err: null });
      expect(await bucket.keys()).toEqual([]);
      expect(await eventually(async () => (await bucket.uploads()).length === 0, 3000)).toBe(true);
    }, 30_000);
  });
}

diskSuite('MinIO', () => minio.ok, () => startMinio());
diskSuite('Swift', () => swift.ok, () => startSwift());
