// Attack: URL purges answered by a replacement worker while it is still reading its index.
//
// docs/CACHING.md (worker restarts): "What is invalidated meanwhile ... stays invalidated when the
// read reaches its entry, and a purge answered by that worker waits for the read, so it removes
// and counts every entry stored before the crash"; (admin API) "Holdings, like a purge, wait for a
// replacement worker's read of its index, so they count every entry stored before the crash" and
// "A purge removes what is stored when it runs and answers how many entries it removed".
// Expected: ten `{"url": ...}` purges sent right after the worker's kill -9 answer `purged: 1`
// each, as prefix purges (which wait for the read) would. Today a URL purge does not wait for the
// read: entries not read yet are dropped later but counted 0, so the admin is told they were not
// in the cache.

import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { startGateway } from './gateway-lib.ts';
import { adminPost, get, killWorker, pathOrigin, seedCache } from './gwindex2-lib.ts';
import { TOKEN } from './gwmap4-lib.ts';

afterAll(runTeardowns);

describe('URL purges during a replacement worker\'s index read', () => {
  it('count every entry stored before the crash', async () => {
    const o = await pathOrigin();
    const cacheDir = await tempDir('gwmap4-urlpurge-');
    const N = 6_000;
    const paths = await seedCache(cacheDir, o, N);
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${o.port}`, '--cache-dir', cacheDir, '--admin-token', TOKEN, '--workers', '1']);
    // All stored and indexed: served without the origin.
    expect((await get(gw.port, paths[5]!)).status).toBe(200);
    expect(o.hits.has(paths[5]!)).toBe(false);
    await killWorker(gw);
    const picked = paths.filter((_, i) => i % 600 === 1);
    const answers = (await Promise.all(picked.map((p) => adminPost(gw.port, TOKEN, 'purge', { url: p })))) as { purged: number }[];
    // Each was stored before the crash and is gone after its purge.
    o.gen.value = 1;
    for (const p of picked) await get(gw.port, p);
    const refetched = picked.filter((p) => o.hits.has(p)).length;
    expect({ counted: answers.reduce((n, a) => n + a.purged, 0), refetched }).toEqual({ counted: picked.length, refetched: picked.length });
  }, 60_000);
});
