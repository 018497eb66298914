// Attack: the S3 endpoint refuses a query parameter given twice, or one that is not valid
// percent-encoding, with InvalidRequest (docs/ERRORS.md). Every real client must still work for
// every operation it sends: listings with every parameter (v1 and v2, paginated with continuation
// tokens and markers, url encoding, fetch-owner, start-after), ?versions and ?uploads listings,
// multipart uploads (create, upload part, list parts, complete, abort), part-number and range
// reads, through awscli 2 (s3api and s3) and the SDK with its defaults.
// Expected: no request of theirs is refused by the gateway's query checks.

import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AbortMultipartUploadCommand, CreateMultipartUploadCommand, GetObjectCommand, ListMultipartUploadsCommand, ListObjectVersionsCommand,
  ListObjectsCommand, ListPartsCommand, paginateListObjectsV2, PutObjectCommand, UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { awscli, awscliAvailable, BUCKET, creds, gatewayFor, sdkDefaults } from '../helpers/s3-clients.ts';

afterAll(runTeardowns);

const REFUSED = /given more than once|not valid percent-encoding|InvalidRequest/;

describe('real clients through the S3 endpoint query checks', () => {
  it('awscli s3api and s3: listings with every parameter, ?versions, ?uploads, multipart, part reads', async () => {
    if (!awscliAvailable()) return;
    const store = await startS3rver({ buckets: [BUCKET] });
    const gw = await gatewayFor(store);
    const c = creds([{ bucket: BUCKET, prefix: 'run42/', write: true }]);
    const dir = await tempDir('estuary-atk-map9-');
    const big = join(dir, 'big.bin');
    writeFileSync(big, Buffer.alloc(12 << 20, 7));
    const s3 = sdkDefaults(gw.url, c);
    for (const k of ['a b', 'a+b', 'a%b', 'x/1', 'x/2', 'y=z&w', 'ü']) await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: `run42/${k}`, Body: k }));
    const calls: string[][] = [
      ['s3api', 'list-objects-v2', '--bucket', BUCKET, '--prefix', 'run42/', '--delimiter', '/', '--start-after', 'run42/a', '--encoding-type', 'url', '--fetch-owner', '--page-size', '1'],
      ['s3api', 'list-objects-v2', '--bucket', BUCKET, '--prefix', 'run42/', '--max-items', '3', '--page-size', '2'],
      ['s3api', 'list-objects', '--bucket', BUCKET, '--prefix', 'run42/', '--delimiter', '/', '--marker', 'run42/a b', '--encoding-type', 'url', '--page-size', '1'],
      ['s3api', 'list-object-versions', '--bucket', BUCKET, '--prefix', 'run42/', '--delimiter', '/', '--key-marker', 'run42/a', '--encoding-type', 'url', '--page-size', '2'],
      ['s3api', 'list-multipart-uploads', '--bucket', BUCKET, '--prefix', 'run42/', '--delimiter', '/', '--key-marker', 'run42/a', '--encoding-type', 'url', '--page-size', '2'],
      ['s3', 'cp', big, `s3://${BUCKET}/run42/big.bin`],
      ['s3', 'cp', `s3://${BUCKET}/run42/big.bin`, join(dir, 'back.bin')],
      ['s3api', 'get-object', '--bucket', BUCKET, '--key', 'run42/big.bin', '--part-number', '1', join(dir, 'part.bin')],
      ['s3api', 'get-object', '--bucket', BUCKET, '--key', 'run42/a+b', '--range', 'bytes=0-1', join(dir, 'r.bin')],
      ['s3api', 'head-object', '--bucket', BUCKET, '--key', 'run42/a%b'],
      ['s3', 'ls', `s3://${BUCKET}/run42/`, '--recursive'],
      ['s3', 'sync', dir, `s3://${BUCKET}/run42/sync/`],
      ['s3', 'rm', `s3://${BUCKET}/run42/sync/`, '--recursive'],
    ];
    const bad: string[] = [];
    for (const args of calls) {
      const r = await awscli(gw.url, c, args, { AWS_MAX_ATTEMPTS: '1' });
      if (REFUSED.test(r.out)) bad.push(`aws ${args.slice(0, 2).join(' ')}: ${r.out.trim().split('\n').pop()}`);
    }
    // A multipart upload the client drives itself, with the upload listed and its parts listed.
    const up = await awscli(gw.url, c, ['s3api', 'create-multipart-upload', '--bucket', BUCKET, '--key', 'run42/mp a+b.bin']);
    const uploadId = /"UploadId": "([^"]+)"/.exec(up.out)?.[1];
    if (!uploadId) bad.push(`create-multipart-upload: ${up.out.trim().split('\n').pop()}`);
    else {
      for (const args of [
        ['s3api', 'upload-part', '--bucket', BUCKET, '--key', 'run42/mp a+b.bin', '--part-number', '1', '--upload-id', uploadId, '--body', big],
        ['s3api', 'list-parts', '--bucket', BUCKET, '--key', 'run42/mp a+b.bin', '--upload-id', uploadId, '--max-parts', '1', '--part-number-marker', '0'],
        ['s3api', 'abort-multipart-upload', '--bucket', BUCKET, '--key', 'run42/mp a+b.bin', '--upload-id', uploadId],
      ]) {
        const r = await awscli(gw.url, c, args, { AWS_MAX_ATTEMPTS: '1' });
        if (REFUSED.test(r.out)) bad.push(`aws ${args.slice(0, 2).join(' ')}: ${r.out.trim().split('\n').pop()}`);
      }
    }
    s3.destroy();
    expect(execFileSync('cmp', [big, join(dir, 'back.bin')]).length).toBe(0);
    expect(bad, bad.join('\n')).toEqual([]);
  }, 180_000);

  it('the SDK with its defaults: paginated listings, ?versions, ?uploads, multipart, part reads', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const gw = await gatewayFor(store);
    const c = creds([{ bucket: BUCKET, prefix: 'run42/', write: true }]);
    const s3 = sdkDefaults(gw.url, c);
    const bad: string[] = [];
    const other: string[] = [];
    const tryIt = async (name: string, f: () => Promise<unknown>) => {
      try {
        await f();
      } catch (err) {
        const e = err as { name?: string; message?: string };
        if (REFUSED.test(`${e.name} ${e.message}`)) bad.push(`${name}: ${e.name} ${e.message}`);
        else other.push(`${name}: ${e.name} ${e.message}`);
      }
    };
    for (const k of ['a b', 'a+b', 'x/1', 'x/2', 'ü']) await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: `run42/${k}`, Body: k }));
    await tryIt('ListObjectsV2 pages', async () => {
      for await (const _ of paginateListObjectsV2({ client: s3, pageSize: 1 }, { Bucket: BUCKET, Prefix: 'run42/', Delimiter: '/', StartAfter: 'run42/a', EncodingType: 'url', FetchOwner: true })) void _;
    });
    await tryIt('ListObjects', () => s3.send(new ListObjectsCommand({ Bucket: BUCKET, Prefix: 'run42/', Delimiter: '/', Marker: 'run42/a b', MaxKeys: 1, EncodingType: 'url' })));
    await tryIt('ListObjectVersions', () => s3.send(new ListObjectVersionsCommand({ Bucket: BUCKET, Prefix: 'run42/', KeyMarker: 'run42/a', VersionIdMarker: 'null', MaxKeys: 2, Delimiter: '/' })));
    await tryIt('ListMultipartUploads', () => s3.send(new ListMultipartUploadsCommand({ Bucket: BUCKET, Prefix: 'run42/', KeyMarker: 'run42/a', UploadIdMarker: 'x', MaxUploads: 2, Delimiter: '/' })));
    await tryIt('multipart', async () => {
      const u = await s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'run42/mp.bin' }));
      await s3.send(new UploadPartCommand({ Bucket: BUCKET, Key: 'run42/mp.bin', UploadId: u.UploadId, PartNumber: 1, Body: Buffer.alloc(5 << 20, 1) }));
      await s3.send(new ListPartsCommand({ Bucket: BUCKET, Key: 'run42/mp.bin', UploadId: u.UploadId, MaxParts: 1, PartNumberMarker: '0' }));
      await s3.send(new AbortMultipartUploadCommand({ Bucket: BUCKET, Key: 'run42/mp.bin', UploadId: u.UploadId }));
    });
    await tryIt('GetObject part 1', () => s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'run42/a b', PartNumber: 1 })));
    await tryIt('GetObject range, checksum mode', () => s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'run42/a+b', Range: 'bytes=0-1', ChecksumMode: 'ENABLED' })));
    s3.destroy();
    console.log(`store errors (not the gateway's query checks): ${other.join('; ') || 'none'}`);
    expect(bad, bad.join('\n')).toEqual([]);
  }, 120_000);
});
