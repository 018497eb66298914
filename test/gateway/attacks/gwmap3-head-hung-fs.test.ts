// Attack: a HEAD, or a conditional GET answered 304, for a disk entry on a cache file system that
// stops answering (a passthrough FUSE file system whose daemon is stopped, gwmap2-passfs.ts, as a
// network file system does when its server goes away). Neither answer carries a byte of the body.
// The read path (gateway/proxy/hit.ts, serveStored) answers both from the index before it opens
// the file; but a whole-body disk hit (no Range header) is first lent a mapping
// (gateway/proxy/hit-server.ts → mapped-bodies.ts lend: open, fstat, pread of the tail, mmap) and
// only then planned. So a HEAD or a client's revalidation of a cached object waits on the hung
// file system (and, on a healthy one, pays the open, pread and mmap for nothing), where the same
// request with a Range header is answered at once.
//
// Expected: a HEAD or a 304 for a disk entry is answered from the index without touching its file,
// as before (docs/CACHING.md, "Disk hits from the page cache": a mapped answer is a disk hit "written
// to the client straight from" the page cache, and "Every answer opens the file again, as a read
// does" — a read never opens the file for an answer without a body), within a few seconds even
// with the cache file system hung.

import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { get, metric, origin } from './disk-lib.ts';
import { pattern, sleep, startGateway } from './gateway-lib.ts';
import { mountPassFs } from './gwmap-passfs-lib.ts';

afterAll(runTeardowns);

const BODY = pattern(256 * 1024, 11);
const ETAG = '"gwmap3-v1"';

/** The status of a request answered within `ms`, or 'late'. */
function statusWithin(port: number, method: string, headers: Record<string, string>, ms: number): Promise<number | 'late'> {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/obj', method, headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    setTimeout(() => {
      resolve('late');
      req.destroy();
    }, ms);
    req.end();
  });
}

describe('answers without a body for a disk entry on a hung cache file system', () => {
  it('HEAD and a 304 revalidation are answered from the index, as with a Range header', async () => {
    const port = await origin((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'max-age=86400', etag: ETAG, 'content-length': BODY.length });
      res.end(BODY);
    });
    const { mnt, fsPid } = await mountPassFs('gwmap3');
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${port}`, '--cache-dir', `${mnt}/cache`, '--workers', '1', '--mem-object-max', '0']);
    onTeardown(() => {
      process.kill(fsPid, 'SIGCONT');
    });
    for (let i = 0; i < 20 && (await metric(gw.port, 'estuary_gateway_disk_mapped_bytes')) === 0; i++) {
      expect((await get(gw.port, '/obj')).body.equals(BODY)).toBe(true);
      await sleep(200);
    }
    expect(await metric(gw.port, 'estuary_gateway_disk_mapped_bytes')).toBeGreaterThan(0);
    // Healthy file system: all four are answered.
    expect(await statusWithin(gw.port, 'HEAD', {}, 3000)).toBe(200);
    expect(await statusWithin(gw.port, 'GET', { 'if-none-match': ETAG }, 3000)).toBe(304);

    process.kill(fsPid, 'SIGSTOP');
    await sleep(1500); // past FUSE's attribute and entry timeouts (1 s by default)

    // Control: with a Range header the read path plans first and never opens the file.
    expect(await statusWithin(gw.port, 'HEAD', { range: 'bytes=0-9' }, 3000), 'ranged HEAD').toBe(206);
    expect(await statusWithin(gw.port, 'GET', { range: 'bytes=0-9', 'if-none-match': ETAG }, 3000), 'ranged 304').toBe(304);
    // Without one, the answer is lent a mapping first: it waits on the hung file system.
    const [head, revalidated] = await Promise.all([statusWithin(gw.port, 'HEAD', {}, 3000), statusWithin(gw.port, 'GET', { 'if-none-match': ETAG }, 3000)]);
    expect({ head, revalidated }).toEqual({ head: 200, revalidated: 304 });
  }, 40_000);
});
