// Attack: an S3 object deleted at the store comes back from the cache once the store fails.
//
// The gateway revalidates a cached object after --s3-revalidate; when the store answers that
// revalidation with 404 NoSuchKey the client gets the 404, but the old entry is kept (every later
// read shows `fwd=stale`). When the store then fails (down, or 5xx), the deleted object's bytes
// are served again as `stale-on-error` for up to --stale-if-error (1 h by default), from the
// mapped entry file.
//
// Expected: once the store has said the object is gone, the cache no longer holds it (docs/
// STAGING.md, "Cache semantics for S3": the next read after --s3-revalidate "asks the store ... and
// either refreshes the entry (304) or replaces it"; a 404 is the store's full answer for the key,
// and RFC 9111 §4.3.3 has a full response to a validation request used instead of the stored
// one). Stale-on-error (docs/CACHING.md, "When upstreams fail") may serve a stored copy the store
// never contradicted, never one it answered 404 for. A deleted object (a retracted dataset, a
// leaked file removed) must not be handed out again because the store went down afterwards.

import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { sleep } from './gateway-lib.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, direct, send } from './s3-harness.ts';

afterAll(runTeardowns);

const text = (n: number, seed: string) => seed.repeat(Math.ceil(n / seed.length)).slice(0, n);
const KEY = `/${BUCKET}/run42/retracted.bin`;

describe('an S3 object deleted at the store', () => {
  it('is not served again from the cache when the store fails after answering 404', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const g = await startS3Gw(store, ['--s3-revalidate', '1s']);
    const cred = await g.issue(`${BUCKET}/run42/`);
    const body = text(2 * 2 ** 20, 'retracted-dataset-');
    expect((await direct(store, 'PUT', KEY, body)).status).toBe(200);
    expect((await send(g.gw, cred, 'GET', KEY)).body).toBe(body);
    expect((await send(g.gw, cred, 'GET', KEY)).headers['cache-status']).toMatch(/hit/);

    expect((await direct(store, 'DELETE', KEY)).status).toBe(204);
    await sleep(1500);
    const gone = await send(g.gw, cred, 'GET', KEY);
    expect(gone.status).toBe(404);
    expect(gone.body).toContain('<Code>NoSuchKey</Code>');

    // The store fails after it said the object is gone.
    await store.kill();
    await sleep(1200);
    const after = await send(g.gw, cred, 'GET', KEY);
    const what = `${after.status} ${String(after.headers['cache-status'])}`;
    expect(after.body === body, `deleted object served again: ${what}`).toBe(false);
    expect(after.status, what).not.toBe(200);
  }, 40_000);
});
