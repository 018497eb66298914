// Attack: an S3 GetObject sent with `Cache-Control: no-store`.
//
// RFC 9111 §5.2.1.5: a request's no-store directive "indicates that a cache MUST NOT store any
// part of either this request or any response to it". The gateway honours it for HTTP
// (freshness.ts storeDecision) but the S3 endpoint's store decision (fetcher.ts s3Decision) looks
// only at the status and the object's own Cache-Control: the object is stored on the gateway's
// disk and served to the next reader from it.
// Expected: a GetObject with a request `Cache-Control: no-store` is fetched for that reader and not
// stored; the next plain read is a miss (docs/STAGING.md, "Cache semantics for S3", names the
// object's no-store as honoured; docs/CACHING.md follows RFC 9111 for requests).

import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, direct, send } from './s3-harness.ts';

afterAll(runTeardowns);

describe('an S3 GetObject with a request Cache-Control: no-store', () => {
  it('is not stored', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const g = await startS3Gw(store);
    const cred = await g.issue(`${BUCKET}/run42/`);
    const key = `/${BUCKET}/run42/private.bin`;
    expect((await direct(store, 'PUT', key, 'do-not-keep/'.repeat(200_000))).status).toBe(200);
    const first = await send(g.gw, cred, 'GET', key, { headers: { 'cache-control': 'no-store' } });
    expect(first.status).toBe(200);
    const next = await send(g.gw, cred, 'GET', key);
    expect({ first: String(first.headers['cache-status']), next: String(next.headers['cache-status']) }).toEqual({
      first: expect.not.stringMatching(/stored/),
      next: expect.stringMatching(/fwd=miss/),
    });
  }, 30_000);
});
