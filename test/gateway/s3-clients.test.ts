// Current S3 clients with their default settings through the gateway, against s3rver, Swift and
// MinIO: the AWS SDK v3 (aws-chunked uploads with CRC32 trailers, checksum validation of every
// read), boto3 and awscli 2. Streamed uploads arrive at the store as plain objects; ranges cut from
// a cached object or from blocks carry no whole-object checksum; DELETE signed with
// Content-Length: 0 reaches the store as signed; a forged aws-chunked body is refused with its S3
// error and nothing is stored.

import { createHash, randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { sign } from '../../lib/sigv4.ts';
import { minioAvailable, startMinio } from '../helpers/minio.ts';
import type { S3Server } from '../helpers/s3rver.ts';
import { startS3rver } from '../helpers/s3rver.ts';
import { startSwift, swiftAvailable } from '../helpers/swift.ts';
import { tempDir } from '../helpers/tmp.ts';
import { awscli, awscliAvailable, boto3, boto3Python, BUCKET, creds, gatewayFor, sdkDefaults } from './helpers/s3-clients.ts';

const MiB = 1024 * 1024;
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
const python = await boto3Python();
const hasAwscli = awscliAvailable();

function storeClient(store: S3Server): S3Client {
  return new S3Client({
    endpoint: store.endpoint,
    region: store.region,
    forcePathStyle: true,
    credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

async function bytesOf(s3: S3Client, key: string, range?: string): Promise<Buffer> {
  const r = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key, Range: range }));
  return Buffer.from(await r.Body!.transformToByteArray());
}

/** A raw PUT through the gateway, signed with `payload` as x-amz-content-sha256. */
function rawPut(gw: string, c: ReturnType<typeof creds>, key: string, body: Buffer, headers: Record<string, string>, payload: string) {
  const path = `/${BUCKET}/${key}`;
  const signed = sign({ method: 'PUT', path, query: '', headers: { ...headers, 'x-amz-security-token': c.sessionToken }, host: new URL(gw).host }, c, 'us-east-1', payload, Date.now());
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(`${gw}${path}`, { method: 'PUT', headers: { ...signed, 'content-length': String(body.length) } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const stores: [string, () => Promise<S3Server>, boolean][] = [
  ['s3rver', () => startS3rver({ buckets: [BUCKET] }), true],
  ['Swift', () => startSwift({ buckets: [BUCKET] }), (await swiftAvailable()).ok],
  ['MinIO', () => startMinio({ buckets: [BUCKET] }), (await minioAvailable()).ok],
];

for (const [name, start, available] of stores) {
  describe.runIf(available)(`S3 clients with their defaults through the gateway (${name})`, async () => {
    const store = await start();
    const gw = await gatewayFor(store, { s3BlockSize: String(MiB) });
    const job = creds([{ bucket: BUCKET, prefix: 'run42/', write: true }]);
    const sdk = sdkDefaults(gw.url, job);
    const direct = storeClient(store);

    it('stores a streamed SDK upload (aws-chunked, CRC32 trailer) as the plain object', async () => {
      const data = randomBytes(300_000);
      const pieces = [data.subarray(0, 1000), data.subarray(1000, 200_000), data.subarray(200_000)];
      await sdk.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'run42/streamed', Body: Readable.from(pieces), ContentLength: data.length }));
      expect(md5(await bytesOf(direct, 'run42/streamed'))).toBe(md5(data));
      expect(md5(await bytesOf(sdk, 'run42/streamed'))).toBe(md5(data));
    });

    it('refuses a forged aws-chunked body with its S3 error, and stores nothing', async () => {
      const frame = (trailer: string) => Buffer.from(`5\r\nhello\r\n0\r\nx-amz-checksum-crc32:${trailer}\r\n\r\n`);
      const headers = { 'content-encoding': 'aws-chunked', 'x-amz-decoded-content-length': '5', 'x-amz-trailer': 'x-amz-checksum-crc32' };
      const bad = await rawPut(gw.url, job, 'run42/forged', frame('AAAAAA=='), headers, 'STREAMING-UNSIGNED-PAYLOAD-TRAILER');
      expect(bad.status).toBe(400);
      expect(bad.body).toContain('<Code>BadDigest</Code>');
      await expect(direct.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'run42/forged' }))).rejects.toMatchObject({ name: 'NotFound' });
      const unknown = await rawPut(gw.url, job, 'run42/forged', frame('AAAAAA=='), { ...headers, 'x-amz-trailer': 'x-amz-checksum-md5' }, 'STREAMING-UNSIGNED-PAYLOAD-TRAILER');
      expect(unknown.body).toContain('<Code>InvalidRequest</Code>');
      expect(unknown.body).toContain('x-amz-checksum-md5');
      const good = await rawPut(gw.url, job, 'run42/forged', frame('NhCmhg=='), headers, 'STREAMING-UNSIGNED-PAYLOAD-TRAILER');
      expect(good.status).toBe(200);
      expect((await bytesOf(direct, 'run42/forged')).toString()).toBe('hello');
    });

    it('serves ranges of a checksummed object, from the whole-object entry and from blocks, that the SDK accepts', async () => {
      const small = randomBytes(200_000);
      const large = randomBytes(3 * MiB + 1000);
      // Put through the gateway with the SDK's default header checksum, which MinIO keeps.
      await sdk.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'run42/small', Body: small }));
      await sdk.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'run42/large', Body: large }));
      expect(md5(await bytesOf(sdk, 'run42/small'))).toBe(md5(small)); // the whole object, now cached
      expect(md5(await bytesOf(sdk, 'run42/small', 'bytes=100-1099'))).toBe(md5(small.subarray(100, 1100)));
      expect(md5(await bytesOf(sdk, 'run42/large', 'bytes=1048000-2100000'))).toBe(md5(large.subarray(1_048_000, 2_100_001)));
      if (python) {
        const r = await boto3(python, gw.url, job, 'get-range', 'run42/small', 'bytes=10-19');
        expect(r).toMatchObject({ ok: true, status: 206, md5: md5(small.subarray(10, 20)) });
        const b = await boto3(python, gw.url, job, 'get-range', 'run42/large', 'bytes=0-99');
        expect(b).toMatchObject({ ok: true, status: 206, md5: md5(large.subarray(0, 100)) });
      }
    });

    it('answers a range of an empty object with S3 InvalidRange, fetched or cached', async () => {
      await sdk.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'run42/empty', Body: '' }));
      for (let i = 0; i < 2; i++) {
        await expect(bytesOf(sdk, 'run42/empty', 'bytes=0-9')).rejects.toMatchObject({ name: 'InvalidRange', $metadata: { httpStatusCode: 416 } });
      }
      if (python) expect(await boto3(python, gw.url, job, 'get-range', 'run42/empty', 'bytes=0-9')).toMatchObject({ ok: false, code: 'InvalidRange' });
    });

    it("answers a lookup of the scope's own prefix as a missing key, and lists it as a prefix", async () => {
      await expect(sdk.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'run42' }))).rejects.toMatchObject({ name: 'NotFound', $metadata: { httpStatusCode: 404 } });
      await expect(bytesOf(sdk, 'run42')).rejects.toMatchObject({ name: 'NoSuchKey' });
      const root = await sdk.send(new ListObjectsV2Command({ Bucket: BUCKET, Delimiter: '/' }));
      expect(root.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['run42/']);
      // Anything else outside the scope is still refused.
      await expect(sdk.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'run4' }))).rejects.toMatchObject({ $metadata: { httpStatusCode: 403 } });
    });

    it.runIf(python)('deletes with boto3, which signs Content-Length: 0', async () => {
      await sdk.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'run42/doomed', Body: 'x' }));
      expect(await boto3(python!, gw.url, job, 'delete', 'run42/doomed')).toEqual({ ok: true });
      await expect(direct.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'run42/doomed' }))).rejects.toMatchObject({ name: 'NotFound' });
    });

    it.runIf(hasAwscli)('aws s3 rm and cp with awscli 2 defaults', async () => {
      const dir = await tempDir('estuary-awscli-');
      const data = randomBytes(100_000);
      await writeFile(join(dir, 'up.bin'), data);
      const cp = await awscli(gw.url, job, ['s3', 'cp', join(dir, 'up.bin'), `s3://${BUCKET}/run42/cli.bin`]);
      expect(cp.code, cp.out).toBe(0);
      expect(md5(await bytesOf(direct, 'run42/cli.bin'))).toBe(md5(data));
      const rm = await awscli(gw.url, job, ['s3', 'rm', `s3://${BUCKET}/run42/cli.bin`]);
      expect(rm.code, rm.out).toBe(0);
      await expect(direct.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'run42/cli.bin' }))).rejects.toMatchObject({ name: 'NotFound' });
    });
  });
}
