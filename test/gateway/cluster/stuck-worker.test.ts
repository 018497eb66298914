// A frozen worker (SIGSTOP) with --workers 2, as docs/CACHING.md promises it is handled: what the
// primary holds for it is bounded (past 8 MiB it is ended and replaced, counted in
// estuary_gateway_worker_backlog_overflows_total), and no counter goes backwards over that.

import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { clusterGateway, Conn, connsOnWorkers, waitWorkers, workerPids } from '../attacks/cluster-lib.ts';
import { parseStrict, sum } from '../attacks/prom-strict.ts';
import { startOrigin } from '../helpers/origin.ts';

afterAll(runTeardowns);

async function scrape(port: number) {
  const c = await Conn.open(port);
  try {
    const a = await c.request('GET', '/metrics', {}, undefined, 20_000);
    return { status: a.status, samples: a.status === 200 ? parseStrict(a.body.toString()) : undefined };
  } finally {
    c.close();
  }
}

describe('gateway cluster: a worker that stops reading its channel', () => {
  it('is ended and replaced once its backlog passes the bound, and the counters carry on', async () => {
    // Each stored object is announced to the other worker with its 12 KB of headers.
    const origin = await startOrigin();
    const pad = 'x'.repeat(12 * 1024);
    origin.server.removeAllListeners('request');
    origin.server.on('request', (_req, res) => {
      res.writeHead(200, { 'cache-control': 'max-age=600', 'x-padding': pad, 'content-length': 1 });
      res.end('y');
    });
    const gw = await clusterGateway(origin.url, 2);
    const [frozen, busy] = workerPids(gw.child.pid) as [number, number];
    const a = (await connsOnWorkers(gw.port, [busy])).get(busy)!;
    for (let i = 0; i < 20; i++) expect((await a.request('GET', `/warm/${i}`)).status).toBe(200);
    const before = await scrape(gw.port);
    expect(before.status).toBe(200);
    process.kill(frozen, 'SIGSTOP');
    onTeardown(() => {
      for (const sig of ['SIGCONT', 'SIGKILL'] as const) {
        try {
          process.kill(frozen, sig);
        } catch {
          // gone already
        }
      }
    });
    // 1,000 objects: about 12 MB of announcements, past the 8 MiB bound.
    for (let i = 0; i < 1000; i++) expect((await a.request('GET', `/obj/${i}`)).status).toBe(200);
    await waitWorkers(gw.child.pid, 2, [frozen]);
    let after = await scrape(gw.port);
    for (let i = 0; i < 50 && after.status !== 200; i++) after = await scrape(gw.port);
    expect(after.status).toBe(200);
    expect(sum(after.samples!, 'estuary_gateway_worker_backlog_overflows_total')).toBe(1);
    expect(sum(after.samples!, 'estuary_gateway_worker_restarts_total')).toBe(1);
    expect(sum(after.samples!, 'estuary_gateway_requests_total')).toBeGreaterThanOrEqual(sum(before.samples!, 'estuary_gateway_requests_total') + 1000);
  }, 60_000);
});
