// Attack: the boundary between a disk hit promoted into memory (≤ 1 MiB and admitted) and one
// mapped from the page cache (larger, or not admitted), and tiny bodies around the 64-byte copy,
// all on ONE keep-alive connection, so that a mapped answer's TCP_NODELAY stays on for the
// memory hits and reads after it. The gateway is restarted on its cache directory first, so
// every first answer is a disk hit (the memory tier starts empty, the page cache does not).
//
// Expected (docs/CACHING.md, "Disk hits from the page cache"): every answer is the whole, right
// body with its Content-Length, whichever way it went out, on a connection that stays usable.

import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { metric, origin } from './disk-lib.ts';
import { pattern, startGateway } from './gateway-lib.ts';

afterAll(runTeardowns);

const MiB = 1024 * 1024;
const SIZES = [64, 65, 129, MiB - 1, MiB, MiB + 1, MiB + 4096, 3 * MiB + 63];
const bodies = new Map(SIZES.map((n, i) => [`/b${n}`, pattern(n, 20 + i)]));

function fetchAll(port: number, agent: http.Agent, paths: string[]): Promise<{ path: string; ok: boolean; socket: number }[]> {
  const sockets = new Map<unknown, number>();
  const one = (path: string) =>
    new Promise<{ path: string; ok: boolean; socket: number }>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => {
          const body = Buffer.concat(parts);
          const ok = res.statusCode === 200 && Number(res.headers['content-length']) === body.length && body.equals(bodies.get(path)!);
          if (!sockets.has(req.socket)) sockets.set(req.socket, sockets.size);
          resolve({ path, ok, socket: sockets.get(req.socket)! });
        });
      });
      req.on('error', reject);
    });
  return paths.reduce<Promise<{ path: string; ok: boolean; socket: number }[]>>(async (acc, p) => [...(await acc), await one(p)], Promise.resolve([]));
}

describe('disk hits around the promote/map boundary on one keep-alive connection', () => {
  it('are all whole and right, mapped or promoted', async () => {
    const port = await origin((req, res) => {
      const body = bodies.get(req.url ?? '');
      if (!body) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'max-age=86400', 'content-length': body.length });
      res.end(body);
    });
    const dir = await tempDir('gwmap3-boundary-');
    const args = ['--upstream', `o=http://127.0.0.1:${port}`, '--cache-dir', dir, '--workers', '1'];
    const first = await startGateway(args);
    const agent1 = new http.Agent({ keepAlive: true, maxSockets: 1 });
    expect((await fetchAll(first.port, agent1, [...bodies.keys()])).every((r) => r.ok)).toBe(true);
    agent1.destroy();
    await first.child.stop('SIGTERM');

    const gw = await startGateway(args);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const order = [...bodies.keys()];
    const paths = [...order, ...order.reverse(), ...order, ...order.reverse()];
    const got = await fetchAll(gw.port, agent, paths);
    agent.destroy();
    expect(got.filter((r) => !r.ok).map((r) => r.path)).toEqual([]);
    expect(new Set(got.map((r) => r.socket)).size, 'one keep-alive connection').toBe(1);
    // Some of them went out mapped (else this test proves nothing about the boundary).
    expect(await metric(gw.port, 'estuary_gateway_disk_mapped_bytes')).toBeGreaterThan(0);
  }, 30_000);
});
