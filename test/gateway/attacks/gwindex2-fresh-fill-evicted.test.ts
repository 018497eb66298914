// Attack: a replacement worker stores misses while it still reads a full cache's index. The
// read then indexes the old entries after the fresh ones, so the fresh ones rank as the least
// recently used and the --disk-cache bound evicts them first.
//
// Expected (docs/CONFIGURATION.md, --disk-cache: "least recently used objects go first"): an
// object fetched and stored seconds ago outranks entries stored long before the crash; once the
// read is over it is still a hit, and the oldest entry made room for it.

import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { chargeOf, footprintOf } from '../../../gateway/cache/format.ts';
import { metric } from './disk-lib.ts';
import { startGateway } from './gateway-lib.ts';
import { entryFiles, get, killWorker, pathOrigin, readMeta, seedCache, sha, bodyOf, until } from './gwindex2-lib.ts';

afterAll(runTeardowns);

const N = 30_000;
const DISK = 'estuary_gateway_cache_objects{tier="disk"}';
/** Files a replacement's index read has not taken in yet: the disk count includes them meanwhile. */
const UNREAD = 'estuary_gateway_disk_index_unread_files';

describe('replacement index read against the --disk-cache bound', () => {
  it('keeps an object stored during the read and evicts the oldest entry instead', async () => {
    const dir = await tempDir('gwi2-lru-');
    const o = await pathOrigin();
    await seedCache(dir, o, N); // N clones plus /seed itself
    // The bound is exactly what the seeded entries take: one more entry evicts one.
    let total = 0;
    for (const f of entryFiles(dir)) {
      const m = readMeta(f);
      total += chargeOf(footprintOf(m));
    }
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${o.port}`, '--cache-dir', dir, '--disk-cache', String(total), '--mem-cache', '0'], undefined);
    expect(await metric(gw.port, DISK)).toBe(N + 1);

    await killWorker(gw);
    const fresh = await get(gw.port, '/fresh');
    expect(fresh.status).toBe(200);
    expect(sha(fresh.body)).toBe(sha(bodyOf('/fresh')));
    // The read was still under way when the fill was stored (else this attack proves nothing):
    // the index holds only part of the entries, or says it has files left to take in.
    const unread = async () => metric(gw.port, UNREAD).catch(() => 0);
    expect((await metric(gw.port, DISK)) < N || (await unread()) > 0).toBe(true);

    expect(await until(async () => (await unread()) === 0 && (await metric(gw.port, DISK)) >= N, 40_000)).toBe(true);
    await new Promise((r) => setTimeout(r, 1000));
    // One newcomer costs one eviction, and the index counts exactly the files on disk (today:
    // two evictions, /fresh and /o/0 both gone from disk, yet 30,001 entries and their bytes counted).
    expect(await metric(gw.port, 'estuary_gateway_disk_evictions_total')).toBe(1);
    expect(await metric(gw.port, DISK)).toBe(entryFiles(dir).length);
    const again = await get(gw.port, '/fresh');
    expect(sha(again.body)).toBe(sha(bodyOf('/fresh')));
    expect(String(again.headers['cache-status'])).toMatch(/; hit/);
    expect(o.hits.get('/fresh')).toBe(1);
    // The fresh file is on disk, and the entry evicted to make room for it was the oldest one.
    const urls = entryFiles(dir).map((f) => readMeta(f).url);
    expect(urls.filter((u) => u.endsWith('/fresh'))).toHaveLength(1);
  }, 60_000);
});
