// Attack: /metrics and the status page while one of two workers is frozen (SIGSTOP: a frozen
// cgroup, a debugger, a process stuck in D state), scraped the way Prometheus scrapes: a new
// connection per scrape (or a keep-alive one that breaks), scrape_timeout 10 s by default.
//
// docs/CACHING.md ("Metrics, summary, admin"): "when a worker does not answer within 5 s (stuck,
// or dying at that moment), the scrape gets 503 and one line naming it"; ("Status page"): "a
// worker that does not answer (stuck in a long job, frozen, ...) is named at the top". Expected:
// every scrape and every page asked for while the worker is frozen is answered (503 naming the
// frozen worker; the page naming it) within Prometheus's 10 s, whichever worker the connection
// would have gone to.

import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { fixed, startOrigin } from '../helpers/origin.ts';
import { clusterGateway, connsOnWorkers, workerPids } from './cluster-lib.ts';
import { rawRequest } from './gateway-lib.ts';

afterAll(runTeardowns);

const SCRAPE_TIMEOUT_MS = 10_000;

function freeze(pid: number): void {
  process.kill(pid, 'SIGSTOP');
  // A stopped worker would never exit: thaw and kill it whatever happens to the test.
  onTeardown(() => {
    for (const sig of ['SIGCONT', 'SIGKILL'] as const) {
      try {
        process.kill(pid, sig);
      } catch {
        // gone already
      }
    }
  });
}

describe('attack: a frozen worker and the numbers gathered from the workers', () => {
  for (const path of ['/metrics', '/estuary/v1/status'] as const) {
    it(`every ${path} on a new connection is answered within 10 s and names the frozen worker`, async () => {
      const origin = await startOrigin({ '/obj': fixed('x', { 'cache-control': 'max-age=600' }) });
      const gw = await clusterGateway(origin.url, 2);
      const [frozen] = workerPids(gw.child.pid) as [number, number];
      freeze(frozen);
      const t0 = Date.now();
      // Six scrapes at once, as six Prometheus servers (or six scrape intervals) would send them.
      const replies = await Promise.all(
        Array.from({ length: 6 }, () =>
          rawRequest(gw.port, `GET ${path} HTTP/1.1\r\nHost: gw.test\r\nConnection: close\r\n\r\n`, SCRAPE_TIMEOUT_MS + 2000).then((r) => ({
            status: r.status,
            ms: Date.now() - t0,
            error: r.error,
            names: r.body.toString().includes(`pid ${frozen}`),
          })),
        ),
      );
      const bad = replies.filter((r) => r.ms > SCRAPE_TIMEOUT_MS || !r.names || (path === '/metrics' && r.status !== 503));
      expect(bad, JSON.stringify(replies)).toEqual([]);
    }, 40_000);
  }
});

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) / 1024;
}

describe('attack: a frozen worker while the others keep storing', () => {
  it('the primary does not pile up, without bound, what it has to tell the frozen worker', async () => {
    // Every stored object is announced to every other worker with its headers; these carry 12 KB.
    const origin = await startOrigin();
    const big = 'x'.repeat(12 * 1024);
    origin.server.removeAllListeners('request');
    origin.server.on('request', (_req, res) => {
      res.writeHead(200, { 'cache-control': 'max-age=600', 'x-padding': big, 'content-length': 1 });
      res.end('y');
    });
    const gw = await clusterGateway(origin.url, 2);
    const [frozen, busy] = workerPids(gw.child.pid) as [number, number];
    const a = (await connsOnWorkers(gw.port, [busy])).get(busy)!;
    for (let i = 0; i < 50; i++) await a.request('GET', `/warm/${i}`);
    freeze(frozen);
    const before = rssMiB(gw.child.pid);
    // 3,000 distinct objects stored by the busy worker: ~37 MB of announcements for the frozen one.
    for (let i = 0; i < 3000; i++) expect((await a.request('GET', `/obj/${i}`)).status).toBe(200);
    const grown = rssMiB(gw.child.pid) - before;
    // The same 3,000 requests with both workers running grew the primary by 2.4 MiB (measured).
    expect(grown, `primary RSS grew ${grown.toFixed(1)} MiB while one worker was frozen`).toBeLessThan(24);
  }, 60_000);
});
