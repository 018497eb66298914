// docs/SEMANTICS.md, the errors table: "the bucket could not store data, after retries — EIO (and
// ESTUARY_FS_UPLOAD_FAILED in the log)". That holds when a file's multipart upload is aborted by
// someone else while it streams (another mount of the prefix starting with a short
// --abort-uploads-after, a bucket lifecycle rule, an operator's cleanup): the next part is
// answered NoSuchUpload, and the writer hears EIO, not ENOENT on a descriptor it holds open.
//
// Through two real mounts of one MinIO bucket: A streams a file, B starts with
// --abort-uploads-after 1s and aborts A's upload, A writes on.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { type MinioServer, minioAvailable, startMinio } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, mountBucket } from '../mount-helpers.ts';
import { Bucket, eventually } from './hidden-harness.ts';
import { driver, O_RDWR_CREAT_TRUNC } from './rmopen-harness.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();
const minio = await minioAvailable();
const MiB = 1024 * 1024;

describe.skipIf(!fuse.ok || !minio.ok)('a streaming upload aborted by another mount', () => {
  let server: MinioServer;
  let bucket: Bucket;
  beforeAll(async () => {
    server = await startMinio();
    bucket = new Bucket(server, `abort-gone-${process.pid}`);
    await bucket.create();
  }, 30_000);

  it('the writer hears EIO, as the log says, not ENOENT', async () => {
    const a = await mountBucket(server, bucket.name, ['--cache-dir', await tempDir('abort-a-')]);
    const cmd = driver();
    const path = join(a.dir, 'streamed');
    expect(await cmd(`open w ${path} ${O_RDWR_CREAT_TRUNC}`)).toBe('OK');
    expect(await cmd(`write w 65 ${40 * MiB} 0`)).toBe('OK');
    expect(await eventually(async () => (await bucket.uploads()).includes('streamed'), 10_000)).toBe(true);
    await new Promise((r) => setTimeout(r, 1500));
    const b = await mountBucket(server, bucket.name, ['--cache-dir', await tempDir('abort-b-'), '--abort-uploads-after', '1s']);
    await b.child.waitFor(/aborted unfinished multipart uploads/, 15_000);
    expect(await bucket.uploads()).not.toContain('streamed');
    // A writes on: its next part meets an upload that is no more.
    const written = await cmd(`write w 66 ${20 * MiB} ${40 * MiB}`);
    const closed = await cmd('close w');
    const said = a.child.output().includes('the writer gets EIO');
    const state = { written, closed, logSaysWriterGetsEIO: said, keys: await bucket.keys() };
    // Whatever the first call to fail, it fails with EIO (the data is not in the bucket).
    const failures = [written, closed].filter((r) => r !== 'OK');
    expect(failures.length, JSON.stringify(state)).toBeGreaterThan(0);
    expect(failures, JSON.stringify(state)).toEqual(failures.map(() => 'ERR Input/output error'));
  }, 60_000);
});
