// Attack: purging one URL (`{"url": ...}`) after access was given back to cache directories the
// index could not read.
//
// docs/CACHING.md ("Where things live"): "A purge first reads again what could not be read, so
// once access is given the next purge indexes and purges it", and (admin API) "when the index
// could not read part of the cache ..., the answer also lists those paths in `unreadable`"; the
// admin API never answers a quiet success.
//
// Today only a prefix purge rereads. A URL purge never does: once access is given it answers
// {"purged":0} and keeps listing the directories as unreadable, however often it is repeated.
// Sent while a prefix purge is rereading (the list is taken out while the reread runs), it answers
// {"purged":0} with no `unreadable` at all (a quiet success), and the entry it named is indexed
// by that reread right after and served: a purged URL keeps being answered from the cache.

import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { sleep } from './gateway-lib.ts';
import { adminPost, get, unreadableCache } from './gwindex2-lib.ts';

afterAll(runTeardowns);

const TOKEN = 'url-purge-reread-token-0123456789';

/** A cache of `n` entries /o/0.. whose directories the gateway (run as nobody) could not read at start; access is then given. */
async function unreadableThenReadable(n: number) {
  const c = await unreadableCache(n, TOKEN);
  c.giveBack(true);
  return c;
}

describe('a URL purge once access to unreadable cache directories is given', () => {
  it('indexes and purges the entry it names', async () => {
    const { o, port } = await unreadableThenReadable(50);
    const answers = [];
    for (let i = 0; i < 2; i++) answers.push(await adminPost(port, TOKEN, 'purge', { url: '/o/7' }));
    expect(answers[0]).toEqual({ purged: 1 });
    o.gen.value = 1;
    expect((await get(port, '/o/7')).status).toBe(200);
    expect(o.hits.get('/o/7')).toBe(1);
  }, 40_000);

  it('sent while a prefix purge rereads, never answers a quiet purged:0 and leaves the URL served', async () => {
    const { o, port } = await unreadableThenReadable(6000);
    // Purge A (a prefix holding nothing) starts the reread of 6000 entries; the URL purge comes just after.
    const a = adminPost(port, TOKEN, 'purge', { prefix: '/nothing/' });
    await sleep(40);
    const b = (await adminPost(port, TOKEN, 'purge', { url: '/o/4321' })) as { purged: number; unreadable?: string[] };
    await a;
    // The entry it named, once A's reread is over: answered from the cache or from the origin?
    o.gen.value = 1;
    expect((await get(port, '/o/4321')).status).toBe(200);
    const servedFromCache = !o.hits.has('/o/4321');
    const told = b.purged === 1 || (b.unreadable?.length ?? 0) > 0;
    // Either it removed the entry, or it said what it could not look into; a URL whose purge said
    // neither is not answered from the cache afterwards.
    expect({ answer: b, told, servedFromCacheAfter: servedFromCache }).toEqual({ answer: b, told: true, servedFromCacheAfter: false });
  }, 40_000);
});
