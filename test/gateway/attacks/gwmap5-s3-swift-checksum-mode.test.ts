// Attack: the gateway asks the store for every object read with `x-amz-checksum-mode: ENABLED`
// (docs/STAGING.md, "What a fill asks for"). Swift's S3 layer is one of the stores the gateway
// serves; an object uploaded with a checksum, one without, a multipart one, read whole, in a
// range and by HEAD, through the AWS SDK for JavaScript v3 (which validates checksums by default).
// Expected: every read succeeds with the store's bytes, as a read straight from Swift does.

import { CompleteMultipartUploadCommand, CreateMultipartUploadCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, UploadPartCommand } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startSwift, swiftAvailable } from '../../helpers/swift.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET } from './s3-harness.ts';

afterAll(runTeardowns);

const SMALL = Buffer.from('swift-checksum/'.repeat(4000));
const PART = Buffer.alloc(5 << 20, 'swift-part/');

describe('object reads through the gateway in front of Swift, asked with checksum mode', async () => {
  const avail = await swiftAvailable();
  it.skipIf(!avail.ok)('succeed with the store\'s bytes (whole, range, HEAD; plain, checksummed, multipart)', async () => {
    const store = await startSwift({ buckets: [BUCKET] });
    const g = await startS3Gw(store);
    const cred = await g.issue(`${BUCKET}/ck/`);
    const site = new S3Client({ endpoint: store.endpoint, region: store.region, forcePathStyle: true, credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey }, requestChecksumCalculation: 'WHEN_REQUIRED' });
    await site.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'ck/plain.bin', Body: SMALL }));
    let checksummed = 'ck/crc.bin';
    try {
      await site.send(new PutObjectCommand({ Bucket: BUCKET, Key: checksummed, Body: SMALL, ChecksumAlgorithm: 'CRC32' }));
    } catch {
      checksummed = 'ck/plain.bin';
    }
    const up = await site.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'ck/multi.bin' }));
    const parts = [];
    for (let n = 1; n <= 2; n++) {
      const p = await site.send(new UploadPartCommand({ Bucket: BUCKET, Key: 'ck/multi.bin', UploadId: up.UploadId, PartNumber: n, Body: PART }));
      parts.push({ ETag: p.ETag, PartNumber: n });
    }
    await site.send(new CompleteMultipartUploadCommand({ Bucket: BUCKET, Key: 'ck/multi.bin', UploadId: up.UploadId, MultipartUpload: { Parts: parts } }));

    const via = new S3Client({ endpoint: g.gw, region: store.region, forcePathStyle: true, credentials: cred });
    const got: Record<string, unknown> = {};
    const want: Record<string, unknown> = {};
    for (const [key, body] of [['ck/plain.bin', SMALL], [checksummed, SMALL], ['ck/multi.bin', Buffer.concat([PART, PART])]] as const) {
      for (const round of ['miss', 'hit']) {
        const name = `${key} ${round}`;
        try {
          const whole = Buffer.from(await (await via.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))).Body!.transformToByteArray());
          const range = Buffer.from(await (await via.send(new GetObjectCommand({ Bucket: BUCKET, Key: key, Range: 'bytes=10-1009' }))).Body!.transformToByteArray());
          const head = await via.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
          got[name] = { whole: whole.equals(body), range: range.equals(body.subarray(10, 1010)), headLength: head.ContentLength };
        } catch (e) {
          got[name] = String(e);
        }
        want[name] = { whole: true, range: true, headLength: body.length };
      }
    }
    expect(got).toEqual(want);
  }, 45_000);
});
