// Buckets with default SSE-KMS encryption (common on AWS) answer every PUT, part and GET with an
// ETag of 32 hex digits that is NOT the MD5 of the content, and say so with
// `x-amz-server-side-encryption: aws:kms` (SSE-C likewise, with
// x-amz-server-side-encryption-customer-algorithm). The docs promise: "Where a store's ETags are no
// MD5 at all (some encrypted buckets), single-part uploads are checked by size only". But stage
// treats any 32-hex ETag as an MD5: every upload fails `the file arrived altered at the store`,
// every part `part N arrived altered`, and every download of an object other tools wrote (no
// x-amz-meta-sha256) fails `content does not match the checksum the store holds`, for ever.
// botocore skips the MD5 check when either header is present. This fake store behaves as AWS does
// for such a bucket.

import { afterAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { serveObject, startFakeS3, type FakeS3 } from './stage-fake-s3.ts';
import { stage } from './stage-run.ts';

afterAll(runTeardowns);

const KMS = { 'x-amz-server-side-encryption': 'aws:kms', 'x-amz-server-side-encryption-aws-kms-key-id': 'arn:aws:kms:us-east-1:111122223333:key/test' };
/** An SSE-KMS ETag: 32 hex digits, not the MD5 of the bytes. */
const kmsEtag = (b: Buffer) => `"${createHash('md5').update('kms').update(b).digest('hex')}"`;

/** Wraps the fake store so that every answer carries SSE-KMS headers and ETags. */
function kmsBucket(s3: FakeS3): void {
  s3.hook = (req, res) => {
    const writeHead = res.writeHead.bind(res);
    res.writeHead = ((status: number, headers?: Record<string, string>) => {
      const h: Record<string, string> = { ...(headers ?? {}), ...KMS };
      if (h.etag && (req.method === 'PUT' || req.method === 'GET' || req.method === 'HEAD')) h.etag = kmsEtag(req.method === 'PUT' ? req.body : (s3.objects.get(req.key)?.body ?? Buffer.alloc(0)));
      return writeHead(status, h);
    }) as typeof res.writeHead;
    if ((req.method === 'GET' || req.method === 'HEAD') && s3.objects.has(req.key) && !req.url.searchParams.has('list-type')) {
      const o = s3.objects.get(req.key)!;
      serveObject(req, res, { ...o, etag: kmsEtag(o.body) });
      return true;
    }
    return false;
  };
}

describe('stage: a bucket with SSE-KMS default encryption', () => {
  it('stage out uploads (single-part and multipart) to it', async () => {
    const s3 = await startFakeS3();
    kmsBucket(s3);
    const src = await tempDir();
    await writeFile(join(src, 'small.txt'), 'small');
    await writeFile(join(src, 'big.bin'), randomBytes(6 * 2 ** 20));
    const r = await stage(['out', src, 's3://bkt/p/', '--endpoint', s3.endpoint, '--part-size', '5MiB', '--state-dir', await tempDir()]);
    expect(r.summary?.failed).toEqual([]);
    expect(r.code).toBe(0);
  });

  it('stage in downloads an object another tool wrote there (no recorded SHA-256)', async () => {
    const body = Buffer.from('written by aws s3 cp into an SSE-KMS bucket');
    const s3 = await startFakeS3(new Map([['p/data.txt', { body, etag: kmsEtag(body) }]]));
    kmsBucket(s3);
    const dest = join(await tempDir(), 'd');
    const r = await stage(['in', 's3://bkt/p/', dest, '--endpoint', s3.endpoint, '--state-dir', await tempDir()]);
    expect(r.summary?.failed).toEqual([]);
    expect(await readFile(join(dest, 'data.txt'))).toEqual(body);
  });
});
