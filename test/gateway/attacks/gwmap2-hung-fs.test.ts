// Attack: a disk cache on a file system that stops answering (a FUSE file system, here a passthrough
// one mounted with kernel_cache in gwmap2-passfs.ts, whose daemon hangs, as a network file system does when its server goes away). A mapped disk hit opens and
// fstat()s its entry file again on every answer (gateway/cache/mapped-bodies.ts, reopen) with
// openSync/fstatSync, on the worker's event loop; a read from disk opens it through the thread
// pool. With the file system hung, one mapped hit freezes the whole worker: every other answer it
// owes (a miss passed to the origin that touches no disk, /metrics) waits with it.
//
// Expected: a hung cache file system holds up only the answers that need its files, as the read
// path does (docs/CACHING.md, "Disk hits from the page cache": "Every answer opens the file
// again, as a read would"); an answer that needs no disk is answered within a few seconds.

import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { get, metric, origin } from './disk-lib.ts';
import { pattern, sleep, startGateway } from './gateway-lib.ts';
import { answeredWithin, mountPassFs } from './gwmap-passfs-lib.ts';

afterAll(runTeardowns);

const BODY = pattern(256 * 1024, 7);

describe('mapped disk hits on a hung cache file system', () => {
  it('do not freeze answers that need no disk', async () => {
    const port = await origin((req, res) => {
      if (req.url === '/obj') {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'max-age=86400', 'content-length': BODY.length });
        res.end(BODY);
        return;
      }
      res.writeHead(200, { 'cache-control': 'no-store', 'content-length': 2 });
      res.end('ok');
    });
    const { mnt, fsPid } = await mountPassFs('gwmap2');
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${port}`, '--cache-dir', `${mnt}/cache`, '--workers', '1', '--mem-object-max', '0']);
    // Thawed before the gateway is stopped (teardowns run last-registered first).
    onTeardown(() => {
      process.kill(fsPid, 'SIGCONT');
    });
    for (let i = 0; i < 20 && (await metric(gw.port, 'estuary_gateway_disk_mapped_bytes')) === 0; i++) {
      expect((await get(gw.port, '/obj')).body.equals(BODY)).toBe(true);
      await sleep(200);
    }
    expect(await metric(gw.port, 'estuary_gateway_disk_mapped_bytes')).toBeGreaterThan(0);
    expect((await get(gw.port, '/nostore')).status).toBe(200);

    // The file system hangs.
    process.kill(fsPid, 'SIGSTOP');
    await sleep(1500); // past FUSE's attribute and entry timeouts (1 s by default)

    // Control: a ranged hit is read through the thread pool; it waits, the worker does not.
    void get(gw.port, '/obj', { range: 'bytes=0-9' }, 30_000).catch(() => undefined);
    await sleep(300);
    expect(await answeredWithin(gw.port, '/nostore?a', 3000), 'after a ranged (read) hit').toBe(true);

    // A whole-body hit is mapped: its reopen runs on the event loop.
    void get(gw.port, '/obj', {}, 30_000).catch(() => undefined);
    await sleep(300);
    expect(await answeredWithin(gw.port, '/nostore?b', 3000), 'after a mapped hit').toBe(true);
  }, 45_000);
});
