// Attack: a client sends three pipelined GETs for a mapped object, reads nothing, and resets the
// connection; then the object is purged. Repeated over several objects.
//
// Expected (docs/CACHING.md, "Disk hits from the page cache": a mapping is "unmapped once the last
// answer writing from it has finished; until then its file's blocks stay allocated", and "A worker
// keeps the mappings of the bodies it served, up to 8,192 of them and 2 GiB of address space"):
// once the connection is gone no answer writes from the mapping, so the purge unmaps it and the
// file's blocks are freed. Today the answers queued behind the first one are ended on a socket
// that is already gone: node:http never calls their res.end callback, the mapping's user count
// never returns to 0, and the purged file stays mapped for the worker's life. Such mappings are no
// longer counted (not in estuary_gateway_disk_mapped_bytes, not against the 8,192 / 2 GiB bounds),
// so any client can pin unbounded deleted 16 MiB files — disk space beyond --disk-cache — and
// mappings towards vm.max_map_count.

import net from 'node:net';
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { get, metric, origin, workers } from './disk-lib.ts';
import { pattern, sleep, startGateway } from './gateway-lib.ts';
import { adminPost } from './gwindex2-lib.ts';

afterAll(runTeardowns);

const SIZE = 16 * 2 ** 20;
const OBJECTS = 6;
const TOKEN = 'attack-token-0123456789';

/** Three pipelined GETs for `path`, almost nothing read, then a reset. */
function pipelinedReset(port: number, path: string): Promise<void> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(3)));
    // The first answer has begun (so the gateway has all three requests): stop reading, then reset.
    s.once('data', () => {
      s.pause();
      setTimeout(() => s.resetAndDestroy(), 300);
    });
    s.on('error', () => {});
    s.on('close', () => resolve());
  });
}

describe('pipelined GETs of mapped objects, then a reset', () => {
  it('leaves no mapping of the purged files', async () => {
    const body = pattern(SIZE, 11);
    const port = await origin((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'max-age=86400', 'content-length': SIZE });
      res.end(body);
    });
    const dir = await tempDir('gwmap-pipe-');
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${port}`, '--cache-dir', dir, '--workers', '1', '--admin-token', TOKEN]);
    const worker = workers(gw.child.pid)[0]!;
    for (let i = 0; i < OBJECTS; i++) {
      // Stored, then mapped by a first hit.
      for (let k = 0; k < 2; k++) expect((await get(gw.port, `/p/${i}`)).status).toBe(200);
      await pipelinedReset(gw.port, `/p/${i}`);
    }
    await sleep(300);
    await adminPost(gw.port, TOKEN, 'purge', { prefix: '/p/' });
    await sleep(500);
    const mapped = readFileSync(`/proc/${worker}/maps`, 'utf8')
      .split('\n')
      .filter((l) => l.includes(dir));
    expect(mapped).toEqual([]);
    expect(await metric(gw.port, 'estuary_gateway_disk_mapped_bytes')).toBe(0);
  }, 30_000);
});
