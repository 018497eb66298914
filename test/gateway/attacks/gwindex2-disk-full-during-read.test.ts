// Attack: the cache's file system (a small tmpfs this test mounts) is nearly full of the
// gateway's own entries when a worker dies; while the replacement reads its index, misses for new
// 256 KiB objects arrive.
//
// Expected (docs/CACHING.md, "When the disk fills up before --disk-cache does": "when it does not
// fit it evicts its own least recently used entries, and if that is not enough the response passes
// through unstored"): the gateway holds 20,000 entries of its own on that disk, so the new objects
// are stored, the oldest entries making room. Today the replacement can only evict what its read
// has indexed so far (nothing), answers `detail=disk-full`, and then stops storing for 10 s.

import { execFileSync } from 'node:child_process';
import { statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { metric, origin } from './disk-lib.ts';
import { pattern, sleep, startGateway } from './gateway-lib.ts';
import { bodyOf, get, killWorker, seedCache, sha, until, type Origin } from './gwindex2-lib.ts';

afterAll(runTeardowns);

const N = 20_000;
const BIG = 256 * 1024;

describe('a nearly full cache file system while the replacement reads its index', () => {
  it('keeps the new objects it stores, evicting its own old entries instead of each other', async () => {
    const dir = await tempDir('gwi2-full-');
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=120m', 'tmpfs', dir]);
    onTeardown(() => {
      execFileSync('umount', ['-l', dir]);
    });
    const hits = new Map<string, number>();
    const port = await origin((req, res) => {
      const path = req.url ?? '/';
      hits.set(path, (hits.get(path) ?? 0) + 1);
      const body = path.startsWith('/big/') ? pattern(BIG, Number(path.slice(5))) : bodyOf(path);
      res.writeHead(200, { 'cache-control': 'max-age=86400', 'content-length': body.length });
      res.end(body);
    });
    const o: Origin = { port, hits, gen: { value: 0 } };
    await seedCache(dir, o, N);
    // Fill what is left with other things, keeping 2 MiB free: room for no 256 KiB body beside the
    // 1 MiB the gateway keeps free, once a few are stored.
    const st = statfsSync(dir);
    const free = Number(st.bavail) * Number(st.bsize);
    writeFileSync(join(dir, 'other-user-data'), Buffer.alloc(Math.max(0, free - 1536 * 1024)));
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${port}`, '--cache-dir', dir, '--mem-cache', '0']);
    await killWorker(gw);
    await sleep(1100); // past the replacement's wait: these are misses either way
    const statuses: string[] = [];
    for (let i = 0; i < 8; i++) {
      const r = await get(gw.port, `/big/${i}`);
      expect(r.status).toBe(200);
      expect(sha(r.body)).toBe(sha(pattern(BIG, i)));
      statuses.push(String(r.headers['cache-status']));
    }
    // The fills above ran while the read was still under way (else this proves nothing): the index
    // holds only part of the entries, or says it has files left to take in.
    const unread = async () => metric(gw.port, 'estuary_gateway_disk_index_unread_files').catch(() => 0);
    expect((await metric(gw.port, 'estuary_gateway_cache_objects{tier="disk"}')) < N / 2 || (await unread()) > 0).toBe(true);
    expect(statuses.filter((s) => s.includes('disk-full'))).toEqual([]);
    expect(statuses.every((s) => s.includes('stored'))).toBe(true);
    // Stored means kept: once the read is over, every one of them is still a hit from disk (today
    // each fill evicted the one before it, the only entries the read had indexed yet, and the
    // 20,000 old entries stay).
    expect(await until(async () => (await unread()) === 0 && (await metric(gw.port, 'estuary_gateway_cache_objects{tier="disk"}')) >= N / 2, 40_000)).toBe(true);
    const kept: string[] = [];
    for (let i = 0; i < 8; i++) {
      const r = await get(gw.port, `/big/${i}`);
      expect(sha(r.body)).toBe(sha(pattern(BIG, i)));
      if (String(r.headers['cache-status']).includes('; hit')) kept.push(`/big/${i}`);
    }
    expect(kept).toHaveLength(8);
  }, 60_000);
});
