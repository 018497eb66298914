// Attack: purging an S3 object whose key has characters a URL escapes (space, plus, percent,
// non-ASCII), by its key as S3 names it and as its request path spells it.
//
// docs/CACHING.md (admin API): "S3 objects are purged as `s3://bucket/key`". An operator purges
// the key as `aws s3 ls` or `estuary stage` print it (`s3://kek-data/odd/run 7+final%25 ü.bin`),
// and as a prefix. (A URL-encoded spelling names another key, since a key may hold a literal `%`:
// it purges nothing, which is right.)
// Expected: the key as S3 names it, and its prefix, answer `purged: 1` and the next read returns
// the store's current bytes.

import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { adminPost } from './gwindex2-lib.ts';
import { startS3Gw, TOKEN } from './gwmap4-lib.ts';
import { BUCKET } from './s3-harness.ts';

afterAll(runTeardowns);

const KEYS = { url: 'odd/run 7+final%25 ü.bin', prefix: 'odd/run 8+final%25 ü.bin' };

describe('an s3:// purge of a key with escaped characters', async () => {
  const avail = await minioAvailable();
  it.skipIf(!avail.ok)('removes the object by its key and by a prefix of it', async () => {
    const store = await startMinio({ buckets: [BUCKET] });
    const g = await startS3Gw(store);
    const cred = await g.issue(`${BUCKET}/odd/`);
    const site = new S3Client({ endpoint: store.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey } });
    const via = new S3Client({ endpoint: g.gw, region: 'us-east-1', forcePathStyle: true, credentials: cred });
    const read = async (key: string) => (await (await via.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))).Body!.transformToString());
    const got: Record<string, unknown> = {};
    const spellings = { url: { url: `s3://${BUCKET}/${KEYS.url}` }, prefix: { prefix: `s3://${BUCKET}/odd/run 8+` } };
    let n = 0;
    for (const [name, purge] of Object.entries(spellings)) {
      const key = KEYS[name as keyof typeof KEYS];
      const body = `version-${n++}`;
      await site.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
      await read(key);
      expect(await read(key)).toBe(body);
      await site.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: `${body}-replaced` }));
      const answer = await adminPost(g.port, TOKEN, 'purge', purge);
      got[name] = { answer, after: await read(key) };
    }
    expect(got).toEqual({
      url: { answer: { purged: 1 }, after: 'version-0-replaced' },
      prefix: { answer: { purged: 1 }, after: 'version-1-replaced' },
    });
  }, 40_000);
});
