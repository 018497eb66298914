// Keys that stress SigV4 canonicalisation, sent through the mount's data path (PUT, ranged GET,
// UploadPart: fuse/s3/data-path.ts, signed by lib/sigv4.ts) to MinIO, which checks signatures
// strictly. Each key is written by the data path, read back by it, and checked by the AWS SDK.
//
// These hold today; kept as a regression.
//
// Expected (docs/SEMANTICS.md: any key S3 allows is a file; the mount never loses data): every
// key S3 accepts is stored under exactly that name and read back byte for byte.

import { GetObjectCommand } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3ObjectClient } from '../../../fuse/s3/s3-client.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startMinio, type MinioServer } from '../../helpers/minio.ts';
import { s3Client } from '../../helpers/s3-smoke.ts';

afterAll(runTeardowns);

const KEYS = [
  'plain',
  'with space',
  'a+b',
  '100%',
  '%20literal',
  'til~de',
  "bang!quote'paren()star*",
  'ünïcödé/日本語/😀',
  'trailing space ',
  'semi;colon,comma=eq&amp',
  'q?mark#hash',
  'tab\there',
  // MinIO keeps keys as paths: no empty segment (`a//b`), none over 255 bytes.
  `long/${Array.from({ length: 4 }, (_, i) => `${i}`.repeat(200)).join('/')}`,
];

describe('datapath attack: SigV4 keys on MinIO', () => {
  let minio: MinioServer;
  let client: S3ObjectClient;
  beforeAll(async () => {
    minio = await startMinio({ buckets: ['sigkeys'] });
    client = new S3ObjectClient({
      bucket: 'sigkeys',
      endpoint: minio.endpoint,
      region: minio.region,
      maxAttempts: 2,
      idleTimeoutMs: 10_000,
      maxSockets: 4,
      credentials: { accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey },
    });
  }, 60_000);

  for (const key of KEYS) {
    it(`PUT, ranged GET and a part upload of ${JSON.stringify(key.slice(0, 40))}`, async () => {
      const body = randomBytes(3000);
      await client.put(key, body);
      const viaSdk = await s3Client(minio).send(new GetObjectCommand({ Bucket: 'sigkeys', Key: key }));
      expect(Buffer.from(await viaSdk.Body!.transformToByteArray()).equals(body)).toBe(true);
      const out: Buffer[] = [];
      await client.getPieces(key, { start: 100, end: 2100 }, (p) => out.push(Buffer.from(p)));
      expect(Buffer.concat(out).equals(body.subarray(100, 2100))).toBe(true);
      const id = await client.createMultipart(key);
      const etag = await client.uploadPart(key, id, 1, body);
      await client.completeMultipart(key, id, [{ partNumber: 1, etag }]);
      expect((await client.get(key)).equals(body)).toBe(true);
    });
  }
});
