// Regression: with --workers 2, mapped disk hits of bodies at page edges (65 bytes: a 1-byte
// mapping; 4096±1 and 4096+64±1: the mapping ends at, before or past a page; 64 KiB) served many
// times in a row on keep-alive connections and on fresh ones are byte-exact with Content-Length
// matching the bytes; no worker keeps an entry file open once its answers closed; and a purge
// from the admin API (received by one worker) unmaps them in every worker (docs/CACHING.md,
// "Disk hits from the page cache": "A mapping is let go when its entry leaves the index
// (eviction, purge, ...) and unmapped once the last answer writing from it has closed").

import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { get, metric, origin, workers } from './disk-lib.ts';
import { pattern, sleep, startGateway } from './gateway-lib.ts';
import { adminPost } from './gwindex2-lib.ts';

afterAll(runTeardowns);

const TOKEN = 'attack-token-0123456789';
const SIZES = [65, 66, 4095, 4096, 4097, 4159, 4160, 4161, 65_536, 65_600, 65_601, 200_000];
const bodies = new Map(SIZES.map((n, i) => [`/b${n}`, pattern(n, i + 1)]));

function openInto(pid: number, dir: string): string[] {
  const out: string[] = [];
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const to = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (to.startsWith(`${dir}/v1/`) && !to.includes('/tmp/')) out.push(to);
    } catch {
      // closed meanwhile
    }
  }
  return out;
}

function mappedFrom(pid: number, dir: string): string[] {
  return readFileSync(`/proc/${pid}/maps`, 'utf8')
    .split('\n')
    .filter((l) => l.includes(`${dir}/v1/`));
}

function keepAliveGets(port: number, paths: string[]): Promise<{ path: string; status: number; length: string | undefined; body: Buffer; complete: boolean }[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  return Promise.all(
    paths.map(
      (path) =>
        new Promise<{ path: string; status: number; length: string | undefined; body: Buffer; complete: boolean }>((resolve, reject) => {
          http
            .get({ host: '127.0.0.1', port, path, agent }, (res) => {
              const parts: Buffer[] = [];
              res.on('data', (d: Buffer) => parts.push(d));
              res.on('close', () =>
                resolve({ path, status: res.statusCode ?? 0, length: res.headers['content-length'], body: Buffer.concat(parts), complete: res.complete }),
              );
            })
            .on('error', reject);
        }),
    ),
  ).finally(() => agent.destroy());
}

describe('mapped hits with two workers', () => {
  it('are exact in a row, hold no files, and a purge unmaps them in both workers', async () => {
    const port = await origin((req, res) => {
      const b = bodies.get(req.url ?? '');
      if (!b) {
        res.writeHead(404);
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'max-age=86400', etag: '"e"', 'content-length': b.length });
      res.end(b);
    });
    const dir = await tempDir('gwmap2-w2-');
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${port}`, '--cache-dir', dir, '--workers', '2', '--admin-token', TOKEN, '--mem-object-max', '0']);
    for (const path of bodies.keys()) expect((await get(gw.port, path)).status).toBe(200);
    // Fresh connections land on both workers; keep-alive ones carry many answers in a row.
    for (let round = 0; round < 4; round++) {
      for (const [path, body] of bodies) {
        const r = await get(gw.port, path);
        expect(r.body.equals(body), `${path} round ${round}`).toBe(true);
      }
    }
    const paths = Array.from({ length: 15 }, () => [...bodies.keys()]).flat();
    const answers = await keepAliveGets(gw.port, paths);
    for (const a of answers) {
      expect(a.complete, a.path).toBe(true);
      expect(a.status, a.path).toBe(200);
      expect(Number(a.length), a.path).toBe(a.body.length);
      expect(a.body.equals(bodies.get(a.path)!), a.path).toBe(true);
    }
    const pids = workers(gw.child.pid!);
    expect(pids.length).toBe(2);
    const bigger = SIZES.filter((n) => n > 64).length;
    expect(await metric(gw.port, 'estuary_gateway_disk_mapped_bytes')).toBeGreaterThan(0);
    await sleep(300);
    for (const pid of pids) {
      expect(openInto(pid, dir), `worker ${pid} keeps entry files open`).toEqual([]);
      expect(mappedFrom(pid, dir).length).toBeLessThanOrEqual(bigger);
    }
    expect(pids.every((pid) => mappedFrom(pid, dir).length > 0), 'both workers map').toBe(true);

    await adminPost(gw.port, TOKEN, 'purge', { prefix: '/' });
    await sleep(500);
    for (const pid of pids) expect(mappedFrom(pid, dir), `worker ${pid} after the purge`).toEqual([]);
    expect(await metric(gw.port, 'estuary_gateway_disk_mapped_bytes')).toBe(0);
  }, 40_000);
});
