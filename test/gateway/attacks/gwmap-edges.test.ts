// Regression (holds today): disk hits answered from mappings at the edges — a 1-byte body, exactly
// 16 MiB (the largest mapped), ranges (first byte, last byte, suffix,
// past the end), HEAD and If-None-Match 304s — are byte-exact, and none of those answers keeps a
// mapping in use: after a purge no worker maps any entry file (docs/CACHING.md, "Disk hits from
// the page cache").

import { readFileSync } from 'node:fs';
import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { get, metric, origin, workers } from './disk-lib.ts';
import { pattern, sleep, startGateway } from './gateway-lib.ts';
import { adminPost } from './gwindex2-lib.ts';
import { TAIL } from '../../../gateway/cache/mapped-bodies.ts';

afterAll(runTeardowns);

const MIB16 = 16 * 2 ** 20;
const TOKEN = 'attack-token-0123456789';
const SIZES: Record<string, number> = { '/one': 1, '/max': MIB16 };

function head(port: number, path: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'HEAD', agent: false }, (res) => {
      let bytes = 0;
      res.on('data', (d: Buffer) => (bytes += d.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('mapped disk hits at the edges', () => {
  it('are byte-exact and release their mappings', async () => {
    const bodies = new Map(Object.entries(SIZES).map(([p, n]) => [p, pattern(n, n & 255)]));
    const port = await origin((req, res) => {
      const b = bodies.get(req.url ?? '')!;
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'max-age=86400', etag: '"v1"', 'content-length': b.length });
      res.end(b);
    });
    const dir = await tempDir('gwmap-edges-');
    // --mem-object-max 0: nothing goes to the memory tier, so every hit is a disk hit.
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${port}`, '--cache-dir', dir, '--workers', '1', '--admin-token', TOKEN, '--mem-object-max', '0']);
    const worker = workers(gw.child.pid)[0]!;
    for (const [path, body] of bodies) {
      expect((await get(gw.port, path)).body.equals(body)).toBe(true);
      const r = await get(gw.port, path);
      expect(r.status).toBe(200);
      expect(r.body.equals(body), path).toBe(true);
      const n = body.length;
      const cases: [string, number, Buffer][] = [
        ['bytes=0-0', 206, body.subarray(0, 1)],
        [`bytes=${n - 1}-${n - 1}`, 206, body.subarray(n - 1)],
        ['bytes=-1', 206, body.subarray(n - 1)],
        [`bytes=${n}-`, 416, Buffer.alloc(0)],
      ];
      for (const [range, status, want] of cases) {
        const r = await get(gw.port, path, { range });
        expect(r.status, `${path} ${range}`).toBe(status);
        if (status === 206) {
          expect(r.body.equals(want), `${path} ${range}`).toBe(true);
          expect(r.headers['content-range']).toBe(`bytes ${range === 'bytes=0-0' ? '0-0' : `${n - 1}-${n - 1}`}/${n}`);
        }
      }
      const h = await head(gw.port, path);
      expect(h.status).toBe(200);
      expect(h.headers['content-length']).toBe(String(n));
      expect(h.bytes).toBe(0);
      const nm = await get(gw.port, path, { 'if-none-match': '"v1"' });
      expect(nm.status).toBe(304);
      expect(nm.body.length).toBe(0);
    }
    // A body of TAIL bytes or fewer is read, not mapped; a mapping holds all but the last TAIL bytes.
    // (Asked again until the large one's fill is committed and a hit maps it.)
    for (let i = 0; i < 30 && (await metric(gw.port, 'estuary_gateway_disk_mapped_bytes')) === 0; i++) {
      await get(gw.port, '/max');
      await sleep(100);
    }
    expect(await metric(gw.port, 'estuary_gateway_disk_mapped_bytes')).toBe(MIB16 - TAIL);
    await adminPost(gw.port, TOKEN, 'purge', { prefix: '/' });
    await sleep(300);
    expect(readFileSync(`/proc/${worker}/maps`, 'utf8').split('\n').filter((l) => l.includes(dir))).toEqual([]);
    expect(await metric(gw.port, 'estuary_gateway_disk_mapped_bytes')).toBe(0);
  }, 40_000);
});
