// Attack: an uploader's Cache-Control metadata (`stale-while-revalidate`, `stale-if-error`) keeps
// an S3 object's old version served past --s3-revalidate.
//
// docs/STAGING.md ("Cache semantics for S3"): "A cached object is served without asking the store
// for `--s3-revalidate` (default 60 s), whatever its `Cache-Control` metadata says (except
// `no-store`, which is honoured); after that the next read asks the store with `If-None-Match:
// ETAG` and either refreshes the entry (304) or replaces it. So an object changed at the store by
// someone else is served stale for at most that interval".
// Today an object stored with `Cache-Control: stale-while-revalidate=N` is, past the interval,
// answered from the old version while the store is asked in the background; with the store down
// it is served without asking for N seconds, whatever --stale-if-error says. Anyone who can write
// an object decides how long the gateway serves it stale.

import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { sleep } from './gateway-lib.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, send } from './s3-harness.ts';

afterAll(runTeardowns);

const text = (n: number, seed: string) => seed.repeat(Math.ceil(n / seed.length)).slice(0, n);
const KEY = 'run42/swr.bin';

describe('S3 object Cache-Control metadata and --s3-revalidate', () => {
  it('past the interval, the first read gets the version the store holds', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    // An interval long enough that the second read is inside it on a busy machine.
    const g = await startS3Gw(store, ['--s3-revalidate', '3s']);
    const cred = await g.issue(`${BUCKET}/run42/`);
    const site = new S3Client({ endpoint: store.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey } });
    const v1 = text(2 * 2 ** 20, 'swr-version-one-');
    const v2 = text(2 * 2 ** 20, 'swr-version-two-');
    await site.send(new PutObjectCommand({ Bucket: BUCKET, Key: KEY, Body: v1, CacheControl: 'max-age=0, stale-while-revalidate=31536000' }));
    const first = await send(g.gw, cred, 'GET', `/${BUCKET}/${KEY}`);
    expect(first.body).toBe(v1);
    expect(String(first.headers['cache-control'])).toContain('stale-while-revalidate');
    expect((await send(g.gw, cred, 'GET', `/${BUCKET}/${KEY}`)).headers['cache-status']).toMatch(/hit/);
    await site.send(new PutObjectCommand({ Bucket: BUCKET, Key: KEY, Body: v2, CacheControl: 'max-age=0, stale-while-revalidate=31536000' }));
    await sleep(3500);
    const after = await send(g.gw, cred, 'GET', `/${BUCKET}/${KEY}`);
    expect(after.body === v2, `past --s3-revalidate: ${after.body === v1 ? 'old version' : 'other'} (${String(after.headers['cache-status'])})`).toBe(true);
  }, 30_000);

  it('with the store down, is not served past --stale-if-error', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const g = await startS3Gw(store, ['--s3-revalidate', '1s', '--stale-if-error', '1s']);
    const cred = await g.issue(`${BUCKET}/run42/`);
    const site = new S3Client({ endpoint: store.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey } });
    const v1 = text(2 * 2 ** 20, 'swr-down-one-');
    await site.send(new PutObjectCommand({ Bucket: BUCKET, Key: KEY, Body: v1, CacheControl: 'max-age=0, stale-while-revalidate=31536000' }));
    expect((await send(g.gw, cred, 'GET', `/${BUCKET}/${KEY}`)).body).toBe(v1);
    await store.kill();
    // Past --s3-revalidate (1 s) and --stale-if-error (1 s more).
    await sleep(3000);
    const statuses: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await send(g.gw, cred, 'GET', `/${BUCKET}/${KEY}`);
      statuses.push(`${r.status} ${String(r.headers['cache-status'])}`);
      await sleep(200);
    }
    expect(statuses.filter((s) => s.startsWith('200')), statuses.join(' | ')).toEqual([]);
  }, 30_000);
});
