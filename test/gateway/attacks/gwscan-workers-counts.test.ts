// Attack on the reports while one of two workers is replaced and reads its index. docs/CACHING.md:
// "While a replacement worker reads its index, the disk objects in the summary, /metrics, the
// status page and admin stats count the entries on disk, each file not read yet as one object
// ... never an empty cache", and the gauge `estuary_gateway_disk_index_unread_files` is "0 once
// every index is whole". Compared here with the files on disk, sample by sample, with junk files
// (no trailer, deleted by the read) among 20,000 entries: the counts hold, but the unread gauge
// shows no progress.

import { afterAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { startGateway } from './gateway-lib.ts';
import { bodyOf, entryFiles, get, killWorker, pathOrigin, seedCache, sha, until } from './gwindex2-lib.ts';

afterAll(runTeardowns);

const N = 20_000;
const JUNK = 500;

async function sample(port: number): Promise<{ objects: number; unread: number }> {
  const text = (await get(port, '/metrics')).body.toString();
  const line = (re: RegExp) => Number(re.exec(text)?.[1] ?? NaN);
  return {
    objects: line(/^estuary_gateway_cache_objects\{tier="disk"\} (\S+)$/m),
    unread: line(/^estuary_gateway_disk_index_unread_files (\S+)$/m),
  };
}

describe('--workers 2, one replaced: disk counts while it reads its index', () => {
  it('objects never fall below the entries on disk and end equal to them; the unread gauge counts down to 0', async () => {
    const o = await pathOrigin();
    const cacheDir = await tempDir('gwscan-counts-');
    await seedCache(cacheDir, o, N);
    for (let i = 0; i < JUNK; i++) {
      const name = randomBytes(16).toString('hex');
      mkdirSync(join(cacheDir, 'v1', name.slice(0, 2)), { recursive: true });
      writeFileSync(join(cacheDir, 'v1', name.slice(0, 2), name), `junk ${i}\n`);
    }
    const entries = N + 1; // and /seed
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${o.port}`, '--cache-dir', cacheDir, '--workers', '2']);
    expect(await until(async () => (await sample(gw.port)).unread === 0, 30_000)).toBe(true);
    expect((await sample(gw.port)).objects).toBe(entries);

    await killWorker(gw, 0);
    const seen: { objects: number; unread: number }[] = [];
    const t0 = Date.now();
    const whole = await until(async () => {
      const s = await sample(gw.port);
      seen.push(s);
      return Date.now() - t0 > 1500 && s.unread === 0;
    }, 30_000);
    expect(whole).toBe(true);
    // The gauge (and the status page's "files to go", CACHING.md: "how many files are left")
    // counts down while the files are read. Today it holds the same number for the whole read
    // (entries found count as unread until the read's very end), so it shows no progress.
    const during = seen.map((s) => s.unread).filter((u) => u > 0);
    expect(during.length).toBeGreaterThan(5);
    expect(Math.min(...during)).toBeLessThan(Math.max(...during) / 2);
    for (const s of seen) expect(s.objects).toBeGreaterThanOrEqual(entries);
    const end = await sample(gw.port);
    expect(end.objects).toBe(entries);
    expect(entryFiles(cacheDir)).toHaveLength(entries);
    for (const p of ['/o/0', `/o/${N - 1}`, '/o/777']) expect(sha((await get(gw.port, p)).body)).toBe(sha(bodyOf(p)));
    await gw.child.stop();
  }, 60_000);
});
