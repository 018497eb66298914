// Attack: whether a reader's download is checksum-verified depends on who read the object first.
//
// The AWS SDKs (JS v3, botocore) send `x-amz-checksum-mode: ENABLED` with GetObject by default and
// check the body against the `x-amz-checksum-*` the store returns for an object uploaded with one
// (MinIO keeps the CRC32 the SDK sent). The gateway's fill forwards the first reader's headers:
// filled by a client without checksum mode (curl, s3fs, rclone, `estuary mount`), the stored copy
// has no checksum, and every SDK reader after it gets none, so its download is not verified end
// to end; read from MinIO directly, it is.
// Expected: a GetObject with `x-amz-checksum-mode: ENABLED` of an object stored with a checksum is
// answered with it (as the store answers), whoever filled the cache (docs/STAGING.md, "What is
// served": a ranged answer leaves the whole object's checksum off "so SDKs that validate checksums
// (their default) accept it"; a whole-object answer is where they validate).

import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, send } from './s3-harness.ts';

afterAll(runTeardowns);

const KEY = 'run42/checksummed.bin';
const BODY = 'checksummed-object/'.repeat(110_377);

describe('x-amz-checksum-mode on a cached object', async () => {
  const avail = await minioAvailable();
  it.skipIf(!avail.ok)('the SDK gets the stored checksum also when a client without checksum mode filled the cache', async () => {
    const store = await startMinio({ buckets: [BUCKET] });
    const g = await startS3Gw(store);
    const cred = await g.issue(`${BUCKET}/run42/`);
    const site = new S3Client({ endpoint: store.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey } });
    const put = await site.send(new PutObjectCommand({ Bucket: BUCKET, Key: KEY, Body: BODY }));
    expect(put.ChecksumCRC32).toBeDefined();
    const direct = await site.send(new GetObjectCommand({ Bucket: BUCKET, Key: KEY }));
    await direct.Body!.transformToString();
    expect(direct.ChecksumCRC32).toBe(put.ChecksumCRC32);

    // A plain reader (no checksum mode) fills the cache.
    expect((await send(g.gw, cred, 'GET', `/${BUCKET}/${KEY}`)).body).toBe(BODY);
    const via = new S3Client({ endpoint: g.gw, region: 'us-east-1', forcePathStyle: true, credentials: cred });
    const r = await via.send(new GetObjectCommand({ Bucket: BUCKET, Key: KEY }));
    expect(await r.Body!.transformToString()).toBe(BODY);
    expect(r.ChecksumCRC32, 'the SDK reader got no checksum to verify').toBe(put.ChecksumCRC32);
  }, 40_000);
});
