// Attack: purging one S3 object by URL while the gateway holds it as aligned blocks (range reads
// of an object larger than --s3-block-size, docs/STAGING.md "Range reads of uncached objects").
//
// docs/CACHING.md (admin API): "A purge removes what is stored when it runs and answers how many
// entries it removed"; docs/STAGING.md: "Each block is one cache entry ... under a key made of the
// object's key, that ETag and the block's index" and "Purging `s3://bucket/prefix` removes the
// blocks under it too". Expected: `{"url": "s3://bucket/key"}` removes what is stored of that
// object, its blocks included (an admin purges a URL to stop it being served from the cache:
// a takedown, a damaged copy), and the next range read goes to the store.
// Today the URL purge answers `{"purged":0}` and the next range read is still answered from the
// blocks (`detail=blocks`, no GET at the store).

import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startCountingProxy } from '../../helpers/counting-proxy.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { adminPost } from './gwindex2-lib.ts';
import { startS3Gw, TOKEN } from './gwmap4-lib.ts';
import { BUCKET, direct, send } from './s3-harness.ts';

afterAll(runTeardowns);

const MIB = 2 ** 20;
const KEY = 'run42/blocks.bin';

describe('a URL purge of an S3 object held as blocks', () => {
  it('removes its blocks', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const body = 'block-purge-'.repeat((3 * MIB) / 12);
    expect((await direct(store, 'PUT', `/${BUCKET}/${KEY}`, body)).status).toBe(200);
    const relay = await startCountingProxy(store.endpoint);
    const g = await startS3Gw({ ...store, endpoint: relay.url }, ['--s3-block-size', '1MiB']);
    const cred = await g.issue(`${BUCKET}/run42/`);
    const range = { range: 'bytes=100-199' };
    const first = await send(g.gw, cred, 'GET', `/${BUCKET}/${KEY}`, { headers: range });
    expect(first.status).toBe(206);
    expect(first.body).toBe(body.slice(100, 200));
    const again = await send(g.gw, cred, 'GET', `/${BUCKET}/${KEY}`, { headers: range });
    expect(String(again.headers['cache-status'])).toMatch(/hit; detail=blocks/);
    const gets = () => relay.count('GET', `/${BUCKET}/${KEY}`).length;
    const before = gets();

    const answer = (await adminPost(g.port, TOKEN, 'purge', { url: `s3://${BUCKET}/${KEY}` })) as { purged: number };
    const after = await send(g.gw, cred, 'GET', `/${BUCKET}/${KEY}`, { headers: range });
    expect(after.body).toBe(body.slice(100, 200));
    expect({ removedSomething: answer.purged > 0, cacheStatus: String(after.headers['cache-status']), storeGetsAfterPurge: gets() - before }).toEqual({
      removedSomething: true,
      cacheStatus: expect.not.stringMatching(/hit/),
      storeGetsAfterPurge: 1,
    });
  }, 30_000);
});
