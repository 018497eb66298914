// Attack: a cache file system that stops answering (a passthrough FUSE file system whose daemon
// is stopped, gwmap2-passfs.ts) under a handful of disk hits. Each hit waits in the thread pool
// on its open(), fstat() or pread() (mapped-bodies.ts, hit.ts), which is what the docs promise:
// "on a hung file system an answer waits, not the worker". But the thread pool has four threads
// (libuv's default) and every one is then stuck; the worker's other users of the pool wait
// behind them, among them the DNS lookup (getaddrinfo) of an origin named by host name. So a
// request that needs no disk at all, an uncacheable one passed to an origin named `localhost`
// on a new connection, is never answered while the file system hangs.
//
// What holds (docs/CACHING.md, "Disk hits from the page cache"): a hung cache file system holds up
// the answers that need its files, and once those fill libuv's thread pool, the other users of the
// pool, such as the lookup of an origin named by host name; an answer that needs neither comes
// within seconds however many disk hits wait. The pool's limit is documented, not lifted: the
// second origin below is named by address.

import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { get, metric, origin } from './disk-lib.ts';
import { pattern, sleep, startGateway } from './gateway-lib.ts';
import { answeredWithin, mountPassFs } from './gwmap-passfs-lib.ts';

afterAll(runTeardowns);

const BODY = pattern(2 * 1024 * 1024, 13);

describe('disk hits waiting on a hung cache file system', () => {
  it('do not hold up a request that needs no disk', async () => {
    const port = await origin((req, res) => {
      if (req.url === '/obj') {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'max-age=86400', 'content-length': BODY.length });
        res.end(BODY);
        return;
      }
      // A new connection, so a new lookup of the origin's name, for every pass.
      res.writeHead(200, { 'cache-control': 'no-store', 'content-length': 2, connection: 'close' });
      res.end('ok');
    });
    const { mnt, fsPid } = await mountPassFs('gwmap3');
    const gw = await startGateway([
      '--upstream', `o=http://localhost:${port}`,
      '--upstream', `ip=http://127.0.0.1:${port}`,
      '--cache-dir', `${mnt}/cache`, '--workers', '1', '--mem-object-max', '0',
    ]);
    onTeardown(() => {
      process.kill(fsPid, 'SIGCONT');
    });
    for (let i = 0; i < 20 && (await metric(gw.port, 'estuary_gateway_disk_mapped_bytes')) === 0; i++) {
      expect((await get(gw.port, '/obj')).body.equals(BODY)).toBe(true);
      await sleep(200);
    }
    expect(await metric(gw.port, 'estuary_gateway_disk_mapped_bytes')).toBeGreaterThan(0);
    expect(await answeredWithin(gw.port, '/nostore?before', 3000), 'before the hang').toBe(true);

    process.kill(fsPid, 'SIGSTOP');
    await sleep(1500); // past FUSE's attribute and entry timeouts (1 s by default)

    // One waiting disk hit: the pool has threads left.
    void get(gw.port, '/obj', {}, 30_000).catch(() => undefined);
    await sleep(300);
    expect(await answeredWithin(gw.port, '/nostore?one', 3000), 'beside one waiting disk hit').toBe(true);

    // Six waiting disk hits: every thread of the pool waits on the file system. A pass to an
    // origin named by address needs no pool thread.
    for (let i = 0; i < 6; i++) void get(gw.port, '/obj', {}, 30_000).catch(() => undefined);
    await sleep(500);
    expect(await answeredWithin(gw.port, '/nostore?six', 3000, { host: 'ip' }), 'beside six waiting disk hits').toBe(true);
  }, 40_000);
});
