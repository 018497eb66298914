// Attack: an S3 object whose owner sets `Cache-Control: no-store` after the gateway cached it
// (CopyObject onto itself with MetadataDirective REPLACE: same bytes, same ETag).
//
// docs/STAGING.md ("Cache semantics for S3"): the object's Cache-Control metadata is ignored
// "except no-store, which is honoured". Past --s3-revalidate the gateway asks with If-None-Match;
// the store answers 304 (same ETag) and the gateway merges that answer's fields into its stored
// copy and keeps serving it from disk, now labelled no-store, revalidating every interval for ever.
// Expected: once the store says no-store (in a 304 or a 200), the stored copy is dropped and reads
// go to the store (Cache-Status without "hit"), as for an object that was no-store from the start.

import { CopyObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { sleep } from './gateway-lib.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, send } from './s3-harness.ts';

afterAll(runTeardowns);

const avail = await minioAvailable();
const KEY = 'run42/becomes-no-store.txt';

describe.skipIf(!avail.ok)('an object that becomes no-store after it was cached', () => {
  it('is no longer served from the cache', async () => {
    const store = await startMinio({ buckets: [BUCKET] });
    const g = await startS3Gw(store, ['--s3-revalidate', '1s']);
    const cred = await g.issue(`${BUCKET}/run42/`);
    const site = new S3Client({ endpoint: store.endpoint, region: store.region, forcePathStyle: true, credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey } });
    const body = 'sensitive-after-all/'.repeat(50_000);
    const put = await site.send(new PutObjectCommand({ Bucket: BUCKET, Key: KEY, Body: body }));
    expect((await send(g.gw, cred, 'GET', `/${BUCKET}/${KEY}`)).body).toBe(body);
    expect(String((await send(g.gw, cred, 'GET', `/${BUCKET}/${KEY}`)).headers['cache-status'])).toMatch(/hit/);
    await site.send(new CopyObjectCommand({ Bucket: BUCKET, Key: KEY, CopySource: `${BUCKET}/${KEY}`, MetadataDirective: 'REPLACE', CacheControl: 'no-store' }));
    const head = await site.send(new HeadObjectCommand({ Bucket: BUCKET, Key: KEY }));
    expect(head.CacheControl).toBe('no-store');
    expect(head.ETag).toBe(put.ETag);
    await sleep(1500);
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await send(g.gw, cred, 'GET', `/${BUCKET}/${KEY}`);
      seen.push(`${r.status} cc=${String(r.headers['cache-control'])} ${String(r.headers['cache-status'])}`);
    }
    expect(seen.filter((s) => /hit|fwd-status=304/.test(s.split(' estuary')[1] ?? s)), seen.join(' | ')).toEqual([]);
  }, 60_000);
});
