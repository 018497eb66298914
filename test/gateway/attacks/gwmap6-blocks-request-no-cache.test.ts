// Attack: a range read with `Cache-Control: no-cache` (or `max-age=0`, or `Pragma: no-cache`) of a
// large S3 object the gateway holds as aligned blocks, after the object was replaced at the store.
//
// RFC 9111 §5.2.1.4: a request's no-cache means the cache must not use a stored response to
// satisfy it without successful validation; the gateway honours it for whole objects (it
// revalidates, handler.ts #cached) and documents RFC 9111 for requests (docs/CACHING.md). The
// block path (handler.ts #s3Cached -> blocks.ts serveBlocks) looks only at If-* headers and serves
// the blocks of the version it learned up to --s3-revalidate earlier: a client that explicitly
// asks for the store's current bytes gets the replaced ones.
// Expected: each of these requests is answered with the new version's bytes.

import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, direct, send } from './s3-harness.ts';

afterAll(runTeardowns);

const MiB = 2 ** 20;
const text = (n: number, seed: string) => seed.repeat(Math.ceil(n / seed.length)).slice(0, n);

describe('a no-cache range read of an object held as blocks', () => {
  for (const h of [{ 'cache-control': 'no-cache' }, { 'cache-control': 'max-age=0' }, { pragma: 'no-cache' }] as Record<string, string>[]) {
    it(`gets the store's current version (${JSON.stringify(h)})`, async () => {
      const store = await startS3rver({ buckets: [BUCKET] });
      const g = await startS3Gw(store, ['--s3-block-size', '1MiB']);
      const cred = await g.issue(`${BUCKET}/run42/`);
      const key = `/${BUCKET}/run42/blocks.bin`;
      const v1 = text(4 * MiB, 'old-version-bytes-');
      const v2 = text(4 * MiB, 'NEW-VERSION-BYTES-');
      expect((await direct(store, 'PUT', key, v1)).status).toBe(200);
      expect((await send(g.gw, cred, 'GET', key, { headers: { range: 'bytes=0-99' } })).body).toBe(v1.slice(0, 100));
      expect((await direct(store, 'PUT', key, v2)).status).toBe(200);
      const r = await send(g.gw, cred, 'GET', key, { headers: { range: 'bytes=0-99', ...h } });
      const name = r.body === v2.slice(0, 100) ? 'v2' : r.body === v1.slice(0, 100) ? 'v1 (replaced)' : r.body.slice(0, 20);
      expect(`${r.status} ${name}`, String(r.headers['cache-status'])).toBe('206 v2');
    }, 30_000);
  }

  it('control (held): the same read of an object stored whole is revalidated', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const g = await startS3Gw(store, ['--s3-block-size', '1MiB']);
    const cred = await g.issue(`${BUCKET}/run42/`);
    const key = `/${BUCKET}/run42/whole.bin`;
    const v1 = text(4 * MiB, 'old-version-bytes-');
    const v2 = text(4 * MiB, 'NEW-VERSION-BYTES-');
    expect((await direct(store, 'PUT', key, v1)).status).toBe(200);
    expect((await send(g.gw, cred, 'GET', key)).body).toBe(v1);
    expect((await direct(store, 'PUT', key, v2)).status).toBe(200);
    const r = await send(g.gw, cred, 'GET', key, { headers: { range: 'bytes=0-99', 'cache-control': 'no-cache' } });
    expect(r.body).toBe(v2.slice(0, 100));
  }, 30_000);
});
