// Memory kept per distinct origin by a forward-mode gateway: asks N distinct origins (loopback
// addresses 127.x.y.z on a closed port, so every one is refused at once) through a real gateway
// process, then reports its RSS before, after, and after idling, plus the number of upstream
// connection pools held (estuary_gateway_upstream_pools) and the memory-reducing collections run
// while idle (estuary_gateway_memory_reclaims_total). Results: docs/CACHING.md, "Memory".
//
//   node scripts/origin-memory.ts [--origins 20000] [--idle 30] [--concurrency 64]

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { parseArgs } from 'node:util';
import { treeMemory } from '../bench/proc.ts';

const { values } = parseArgs({
  options: {
    origins: { type: 'string', default: '20000' },
    idle: { type: 'string', default: '30' },
    concurrency: { type: 'string', default: '64' },
  },
});
const N = Number(values.origins);
const IDLE_S = Number(values.idle);
const CONCURRENCY = Number(values.concurrency);

/** RSS of the gateway's primary and its workers together, MiB. */
function rssMiB(pid: number): number {
  return Math.round(treeMemory(pid).rss / 104857.6) / 10;
}

function get(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The i-th origin: 127.x.y.z (never 127.0.0.1, whose port 9 might be open) on port 9. */
function origin(i: number): string {
  const n = i + 256;
  return `http://127.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}:9`;
}

const dir = mkdtempSync(join(tmpdir(), 'estuary-origin-memory-'));
const gw = spawn(process.execPath, [
  'bin/estuary.js', 'gateway', '--listen', '127.0.0.1:0', '--cache-dir', dir, '--allow-dest', '@loopback',
  '--log-format', 'json',
], { cwd: new URL('../', import.meta.url).pathname, stdio: ['ignore', 'ignore', 'pipe'] });
let err = '';
gw.stderr.on('data', (c) => (err += c));
const port = await new Promise<number>((resolve, reject) => {
  const t = setInterval(() => {
    const m = /"listen":"127\.0\.0\.1:(\d+)"/.exec(err);
    if (m) {
      clearInterval(t);
      resolve(Number(m[1]));
    }
  }, 50);
  gw.once('exit', () => reject(new Error(`gateway exited: ${err}`)));
});
/** The gauges and counters of /metrics this measurement is about. */
const stats = async () => {
  const text = (await get(port, '/metrics')).body;
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { pools: read('estuary_gateway_upstream_pools'), reclaims: read('estuary_gateway_memory_reclaims_total') };
};
try {
  await get(port, origin(-1) + '/warm');
  await new Promise((r) => setTimeout(r, 1000));
  const before = rssMiB(gw.pid!);
  let next = 0;
  const statuses = new Map<number, number>();
  const t0 = Date.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < N) {
        const i = next++;
        const r = await get(port, `${origin(i)}/x`);
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      }
    }),
  );
  const tookS = (Date.now() - t0) / 1000;
  const after = rssMiB(gw.pid!);
  const sAfter = await stats();
  await new Promise((r) => setTimeout(r, IDLE_S * 1000));
  const idle = rssMiB(gw.pid!);
  const sIdle = await stats();
  console.log(JSON.stringify({
    origins: N, tookS, statuses: Object.fromEntries(statuses),
    rssMiB: { before, after, afterIdle: idle, idleS: IDLE_S },
    afterBurst: sAfter, afterIdle: sIdle,
  }, null, 2));
} finally {
  gw.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
}
