// Attacks on the append that goes on after a flush published a file without a local copy
// (docs/SEMANTICS.md, "ESTUARY_FS_COPY_DROPPED" and "UploadPartCopy"), against real servers:
// s3rver (no UploadPartCopy: the bytes come through this host with If-Match), MinIO (strict
// signatures, real UploadPartCopy with x-amz-copy-source-if-match) and Swift's s3api (412 on that
// condition for objects uploaded in parts). The cache directory is a 256 KiB tmpfs, so no local
// copy of a part fits and every flush publishes without one.

import { constants } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { S3ObjectClient } from '../../../fuse/s3/s3-client.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import type { S3Server } from '../../helpers/s3rver.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { startSwift, swiftAvailable } from '../../helpers/swift.ts';
import { bytesAt, fsOnFullDisk, MiB, writeRange } from './append-after-flush-fs.ts';

afterAll(runTeardowns);

const BUCKET = 'append';
const O_WRONLY = constants.O_WRONLY;
const swift = await swiftAvailable();
const minio = await minioAvailable();

function clientOf(server: S3Server): S3ObjectClient {
  return new S3ObjectClient({
    bucket: BUCKET,
    endpoint: server.endpoint,
    region: server.region,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
    maxAttempts: 2,
    idleTimeoutMs: 20_000,
    maxSockets: 8,
    env: {},
  });
}

/** Another client's object of `size` bytes, uploaded in parts of 5 MiB (as aws s3 cp would). */
async function theirMultipart(client: S3ObjectClient, key: string, size: number, salt: number): Promise<Buffer> {
  const body = bytesAt(0, size, salt);
  const id = await client.createMultipart(key, {});
  const parts = [];
  for (let at = 0, n = 1; at < size; at += 5 * MiB, n++)
    parts.push({ partNumber: n, etag: await client.uploadPart(key, id, n, body.subarray(at, Math.min(size, at + 5 * MiB))) });
  await client.completeMultipart(key, id, parts);
  return body;
}

function attacks(name: string, start: () => Promise<S3Server>) {
  describe(`append after a flush without a local copy: ${name}`, () => {
    let client: S3ObjectClient;

    it('starts', async () => {
      client = clientOf(await start());
    }, 120_000);

    it('publish 20 MiB in parts, append 1 MiB, close: every byte, in order', async () => {
      const { fs, warned } = await fsOnFullDisk(client, { firstPartSize: 5 * MiB });
      const fh = await fs.create('/a', 0o644);
      await writeRange(fs, fh, 0, 20 * MiB);
      await fs.flush(fh);
      await writeRange(fs, fh, 20 * MiB, 21 * MiB + 3);
      await fs.flush(fh);
      await fs.release(fh);
      const got = await client.get('a');
      expect(got.length).toBe(21 * MiB + 3);
      expect(got.equals(bytesAt(0, 21 * MiB + 3))).toBe(true);
      expect(warned.some((w) => w.obj.code === 'ESTUARY_FS_COPY_DROPPED')).toBe(true);
    }, 60_000);

    // Nothing of theirs may be mixed with ours (docs/SEMANTICS.md: "if another client replaced the
    // object meanwhile, the append fails ... and the other client's object stands").
    it('another client replaces the object with one in parts between flush and append', async () => {
      const { fs } = await fsOnFullDisk(client, { firstPartSize: 5 * MiB });
      const fh = await fs.create('/b', 0o644);
      await writeRange(fs, fh, 0, 20 * MiB);
      await fs.flush(fh);
      const theirs = await theirMultipart(client, 'b', 20 * MiB, 77);
      await writeRange(fs, fh, 20 * MiB, 21 * MiB).catch(() => undefined);
      await expect(fs.flush(fh)).rejects.toThrow();
      await fs.release(fh).catch(() => undefined);
      expect((await client.get('b')).equals(theirs)).toBe(true);
    }, 60_000);

    it('another client replaces the object with one PUT between flush and append', async () => {
      const { fs } = await fsOnFullDisk(client, { firstPartSize: 5 * MiB });
      const fh = await fs.create('/c', 0o644);
      await writeRange(fs, fh, 0, 20 * MiB);
      await fs.flush(fh);
      const theirs = bytesAt(0, 20 * MiB, 55);
      await client.put('c', theirs, {});
      await writeRange(fs, fh, 20 * MiB, 21 * MiB).catch(() => undefined);
      await expect(fs.flush(fh)).rejects.toThrow();
      await fs.release(fh).catch(() => undefined);
      expect((await client.get('c')).equals(theirs)).toBe(true);
    }, 60_000);

    // The object is renamed while open after the flush (a server-side copy to the new key, whose
    // ETag on a real server differs from the one in parts it was copied from), then appended to.
    it('flush, rename, append: the new name holds every byte and close succeeds', async () => {
      const { fs } = await fsOnFullDisk(client, { firstPartSize: 5 * MiB });
      const fh = await fs.create('/d', 0o644);
      await writeRange(fs, fh, 0, 20 * MiB);
      await fs.flush(fh);
      await fs.rename('/d', '/d2');
      await writeRange(fs, fh, 20 * MiB, 21 * MiB);
      await fs.flush(fh);
      await fs.release(fh);
      const got = await client.get('d2');
      expect(got.equals(bytesAt(0, 21 * MiB))).toBe(true);
    }, 60_000);

    // chmod (or touch) of the flushed file while it is still open copies the object onto itself
    // (new metadata, and on a real server a new ETag); the handle must go on from that version,
    // not refuse the append as if another client had replaced the object.
    it('flush, chmod, append: every byte, the new mode, and close succeeds', async () => {
      const { fs } = await fsOnFullDisk(client, { firstPartSize: 5 * MiB });
      const fh = await fs.create('/e', 0o644);
      await writeRange(fs, fh, 0, 20 * MiB);
      await fs.flush(fh);
      await fs.chmod('/e', 0o600);
      await writeRange(fs, fh, 20 * MiB, 21 * MiB);
      await fs.flush(fh);
      await fs.release(fh);
      expect((await client.get('e')).equals(bytesAt(0, 21 * MiB))).toBe(true);
      expect((await fs.getattr('/e')).perm).toBe(0o600);
    }, 60_000);

    // The copy names its source in x-amz-copy-source: a name with characters that need encoding
    // must still name our object (a NoSuchKey there fails the append without the way through
    // this host).
    for (const name of ["sp ace+plus%25pct?q#h&=é✓!'()*~", 'dir/sub dir/ü ünïcödé', 'x'.repeat(200)]) {
      it(`publish in parts, append, close, under the name ${JSON.stringify(name).slice(0, 40)}: every byte`, async () => {
        const { fs } = await fsOnFullDisk(client, { firstPartSize: 5 * MiB });
        const dirs = name.split('/').slice(0, -1);
        for (let i = 1; i <= dirs.length; i++) await fs.mkdir(`/${dirs.slice(0, i).join('/')}`, 0o755);
        const fh = await fs.create(`/${name}`, 0o644);
        await writeRange(fs, fh, 0, 20 * MiB);
        await fs.flush(fh);
        await writeRange(fs, fh, 20 * MiB, 21 * MiB);
        await fs.flush(fh);
        await fs.release(fh);
        expect((await client.get(name)).equals(bytesAt(0, 21 * MiB))).toBe(true);
      }, 60_000);
    }

    // A file published in one PUT (under 16 MiB) and appended to: the leading copy is of an
    // object not in parts, where Swift does take the copy's condition.
    it('publish 10 MiB in one PUT, append 7 MiB, close: every byte', async () => {
      const { fs } = await fsOnFullDisk(client, { firstPartSize: 5 * MiB });
      const fh = await fs.create('/one-put', 0o644);
      await writeRange(fs, fh, 0, 10 * MiB);
      await fs.flush(fh);
      await writeRange(fs, fh, 10 * MiB, 17 * MiB);
      await fs.flush(fh);
      await fs.release(fh);
      expect((await client.get('one-put')).equals(bytesAt(0, 17 * MiB))).toBe(true);
    }, 60_000);

    // "The same holds for an append to an existing object opened for writing when the cache disk
    // fails to take its copy" (docs/SEMANTICS.md): an object another client uploaded in parts,
    // found by a lookup or by a listing (ls before the append), opened without O_TRUNC.
    for (const via of ['lookup', 'listing']) {
      it(`append to an existing object in parts found by ${via}: every byte`, async () => {
        const key = `existing-${via}`;
        const theirs = await theirMultipart(client, key, 20 * MiB, 3);
        const { fs } = await fsOnFullDisk(client, { firstPartSize: 5 * MiB });
        if (via === 'listing') await fs.readdir('/');
        else await fs.getattr(`/${key}`);
        const fh = await fs.open(`/${key}`, O_WRONLY);
        const more = bytesAt(20 * MiB, MiB, 3);
        await fs.write(fh, more, 20 * MiB);
        await fs.flush(fh);
        await fs.release(fh);
        expect((await client.get(key)).equals(Buffer.concat([theirs, more]))).toBe(true);
      }, 60_000);
    }
  });
}

attacks('s3rver', () => startS3rver({ buckets: [BUCKET] }));
describe.runIf(minio.ok)('MinIO', () => attacks('minio', () => startMinio({ buckets: [BUCKET] })));
describe.runIf(swift.ok)('Swift', () => attacks('swift', () => startSwift({ buckets: [BUCKET] })));
