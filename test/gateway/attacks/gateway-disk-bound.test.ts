// The disk tier's bound. docs/CACHING.md, "What the disk tier costs in memory": "`--disk-cache`
// bounds what the files take on disk"; "Where things live": the disk tier is "bounded by
// `--disk-cache`". A fill writes its body into <cache-dir>/v1/tmp/ before it knows whether the
// entry will fit, and nothing counts those files: an object larger than the whole --disk-cache
// (but under --max-object-size) is copied to disk whole, on every request, only to be deleted at
// commit; several fills at once hold several such copies. Expected: a body that cannot be kept
// (its announced length's blocks exceed --disk-cache) passes through without being written, and
// what <cache-dir>/v1 holds stays within --disk-cache plus the directories.

import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp.ts';
import { NODE, startChild } from '../../helpers/process.ts';
import { freePort, startGateway, sleep } from './gateway-lib.ts';
import { du, entryFiles, fileBlocks, get, origin } from './disk-lib.ts';

const MiB = 1024 * 1024;

/** An origin that sends `size` bytes with a Content-Length, slowly (64 KiB every 20 ms). */
async function slowOrigin(size: number): Promise<number> {
  return origin((req, res) => {
    res.writeHead(200, { 'content-length': String(size), 'cache-control': 'max-age=600' });
    let sent = 0;
    const tick = () => {
      if (res.destroyed) return;
      const n = Math.min(64 * 1024, size - sent);
      res.write(Buffer.alloc(n, 0x61));
      sent += n;
      if (sent >= size) res.end();
      else setTimeout(tick, 20);
    };
    tick();
  });
}

describe('--disk-cache bounds the files of the disk tier', () => {
  it('an object larger than the whole --disk-cache is never written to the cache dir', { timeout: 60_000 }, async () => {
    const dir = await tempDir('atk-gwdisk-');
    const up = await slowOrigin(6 * MiB);
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${up}`, '--cache-dir', dir, '--disk-cache', '1MiB']);
    let peak = 0;
    const pending = get(gw.port, '/big', { host: 'o' });
    let done = false;
    void pending.then(() => (done = true));
    while (!done) {
      peak = Math.max(peak, fileBlocks(`${dir}/v1`));
      await sleep(50);
    }
    const r = await pending;
    expect(r.status).toBe(200);
    expect(r.body.length).toBe(6 * MiB);
    // It cannot be kept, and is not: nothing indexed, nothing left behind.
    expect(entryFiles(dir)).toHaveLength(0);
    // ... but while it arrived the cache dir held it whole: 6 MiB under a 1 MiB bound.
    expect(peak, `peak of file blocks under v1 while the 6 MiB fill ran: ${peak}`).toBeLessThanOrEqual(1 * MiB);
  });

  it('fills running at once do not hold more than --disk-cache between them', { timeout: 60_000 }, async () => {
    const dir = await tempDir('atk-gwdisk-');
    const up = await slowOrigin(3 * MiB);
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${up}`, '--cache-dir', dir, '--disk-cache', '4MiB']);
    let peak = 0;
    let peakDu = 0;
    const all = Promise.all([0, 1, 2, 3].map((i) => get(gw.port, `/obj${i}`, { host: 'o' })));
    let done = false;
    void all.then(() => (done = true));
    while (!done) {
      peak = Math.max(peak, fileBlocks(`${dir}/v1`));
      peakDu = Math.max(peakDu, du(`${dir}/v1`).allocated);
      await sleep(50);
    }
    for (const r of await all) expect(r.status).toBe(200);
    // 4 x 3 MiB bodies were on disk at once under a 4 MiB --disk-cache.
    expect(peak, `peak file blocks ${peak}, du ${peakDu}`).toBeLessThanOrEqual(4 * MiB + 64 * 1024);
  });

  // Every entry counts at least one 4 KiB block, so a --disk-cache below that stores nothing, and
  // the memory tier (copies of disk entries) nothing either: the gateway becomes a plain proxy
  // without a word. Expected: refused at start (exit 2, one line naming --disk-cache), or at
  // least a warning naming it.
  it('a --disk-cache smaller than one block is refused or warned about', { timeout: 60_000 }, async () => {
    const dir = await tempDir('atk-gwdisk-');
    const port = await freePort();
    const bin = new URL('../../../bin/estuary.js', import.meta.url).pathname;
    const child = startChild(NODE, [bin, 'gateway', '--listen', `127.0.0.1:${port}`, '--upstream', 'o=http://127.0.0.1:9', '--cache-dir', dir, '--disk-cache', '4095', '--log-format', 'json']);
    await Promise.race([child.exited, child.waitFor(/gateway listening/, 30_000).catch(() => undefined)]);
    await sleep(300);
    const said = child.output().split('\n').filter((l) => /disk-cache/.test(l) && !/"level":30/.test(l));
    expect(said.length, child.output()).toBeGreaterThan(0);
  });
});
