// Attack: an S3 object's Cache-Control metadata `private="ETag"` (or `no-cache="ETag"`) strips the
// ETag from the copy the gateway stores (stored-headers.ts applies RFC 9111's field-qualified
// directives to S3 objects too).
//
// docs/STAGING.md ("Cache semantics for S3"): the object is served "whatever its Cache-Control
// metadata says (except no-store)"; revalidation "sends only If-None-Match when an ETag is known:
// s3rver and Swift both answer 304 to If-Modified-Since for an object replaced within the same
// second". With the ETag stripped by the uploader's metadata, the gateway (1) answers GET/HEAD
// without the ETag S3 and MinIO send, and (2) revalidates with If-Modified-Since, so an object
// replaced at the store within the same second is served in its old version for ever, each
// revalidation confirming it (304) — no bound at all, where the contract is --s3-revalidate.
// Expected: the answer carries the object's ETag, and past --s3-revalidate the new version is served.

import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { sleep } from './gateway-lib.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, send } from './s3-harness.ts';

afterAll(runTeardowns);

const text = (n: number, seed: string) => seed.repeat(Math.ceil(n / seed.length)).slice(0, n);

describe('S3 object metadata private="ETag"', () => {
  it('keeps the ETag in the answer and does not let a same-second replacement stay stale for ever', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const g = await startS3Gw(store, ['--s3-revalidate', '1s']);
    const cred = await g.issue(`${BUCKET}/run42/`);
    const site = new S3Client({ endpoint: store.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey } });
    const v1 = text(300_000, 'etag-stripped-version-ONE-');
    const v2 = text(300_000, 'etag-stripped-version-TWO-');
    let attempt = 0;
    let key: string;
    let got: string;
    let put1: string | undefined;
    // Upload, read through the gateway and replace within one second (Last-Modified granularity).
    for (;;) {
      key = `run42/private-etag-${attempt++}.txt`;
      const t0 = Math.floor(Date.now() / 1000);
      put1 = (await site.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: v1, CacheControl: 'private="ETag"' }))).ETag;
      const first = await send(g.gw, cred, 'GET', `/${BUCKET}/${key}`);
      expect(first.body).toBe(v1);
      got = String(first.headers.etag);
      await site.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: v2, CacheControl: 'private="ETag"' }));
      if (Math.floor(Date.now() / 1000) === t0 || attempt > 10) break;
    }
    expect.soft(got, 'the store sends this ETag; the gateway must too').toBe(String(put1));
    await sleep(1500);
    const bodies: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await send(g.gw, cred, 'GET', `/${BUCKET}/${key}`);
      bodies.push(`${r.body === v2 ? 'v2' : r.body === v1 ? 'v1' : 'other'} (${String(r.headers['cache-status'])})`);
      await sleep(1200);
    }
    expect(bodies.map((b) => b.slice(0, 2)), bodies.join(' | ')).toEqual(['v2', 'v2', 'v2']);
  }, 60_000);
});
