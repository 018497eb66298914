// Attack: /metrics with --workers 2 across a worker's death (kill -9) and replacement.
//
// docs/CACHING.md ("Metrics, summary, admin"): "With --workers N a scrape sums every worker; when
// a worker does not answer within 5 s ... the scrape gets 503 and one line naming it, not sums
// without it: those would drop, and Prometheus would read the drop as a counter reset."
// Expected: no successful scrape ever shows a counter below what an earlier scrape showed (no
// counter reset is visible to Prometheus while the gateway kept running), whether it is taken in
// the second the replacement worker starts or after it serves.

import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { fixed, startOrigin } from '../helpers/origin.ts';
import { clusterGateway, Conn, connsOnWorkers, waitWorkers, workerPids } from './cluster-lib.ts';
import { sleep } from './gateway-lib.ts';
import { parseStrict, sum } from './prom-strict.ts';

afterAll(runTeardowns);

const REQS = 'estuary_gateway_requests_total';
const SENT = 'estuary_gateway_bytes_sent_total';

describe('attack: /metrics counters across a worker restart', () => {
  it('a counter summed over the workers never goes backwards after one worker is killed and replaced', async () => {
    const origin = await startOrigin({ '/obj': fixed('x'.repeat(4096), { 'cache-control': 'max-age=600' }) });
    const gw = await clusterGateway(origin.url, 2);
    const pids = workerPids(gw.child.pid);
    const conns = await connsOnWorkers(gw.port, pids);
    // 30 requests on each worker: each holds about half of the gateway's counts.
    for (const c of conns.values()) for (let i = 0; i < 30; i++) expect((await c.request('GET', '/obj')).status).toBe(200);
    const scrape = async () => {
      const c = await Conn.open(gw.port);
      try {
        const a = await c.request('GET', '/metrics', {}, undefined, 20_000);
        return { status: a.status, text: a.body.toString() };
      } finally {
        c.close();
      }
    };
    const before = await scrape();
    expect(before.status).toBe(200);
    const s0 = parseStrict(before.text);
    const r0 = sum(s0, REQS);
    const b0 = sum(s0, SENT);
    expect(r0).toBeGreaterThanOrEqual(60);

    const victim = pids[0]!;
    process.kill(victim, 'SIGKILL');
    // Scrape through the restart: while the replacement starts and after it is ready.
    const seen: { at: number; status: number; reqs?: number; sent?: number }[] = [];
    const t0 = Date.now();
    let replaced = false;
    while (Date.now() - t0 < 6000) {
      const s = await scrape();
      if (s.status === 200) {
        const parsed = parseStrict(s.text);
        seen.push({ at: Date.now() - t0, status: 200, reqs: sum(parsed, REQS), sent: sum(parsed, SENT) });
      } else seen.push({ at: Date.now() - t0, status: s.status });
      if (!replaced && workerPids(gw.child.pid).filter((p) => p !== victim).length === 2) replaced = true;
      await sleep(100);
    }
    await waitWorkers(gw.child.pid, 2, [victim]);
    const after = parseStrict((await scrape()).text);
    seen.push({ at: Date.now() - t0, status: 200, reqs: sum(after, REQS), sent: sum(after, SENT) });
    const backwards = seen.filter((s) => s.status === 200 && ((s.reqs ?? 0) < r0 || (s.sent ?? 0) < b0));
    expect(backwards, `before the kill: requests ${r0}, bytes sent ${b0}; scrapes after: ${JSON.stringify(seen)}`).toEqual([]);
  }, 60_000);
});
