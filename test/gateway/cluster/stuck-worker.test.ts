// A frozen worker (SIGSTOP) with --workers 2, as docs/CACHING.md promises it is handled: new
// connections go to the other worker and, once it thaws, none is served a second time; what the
// primary holds for it is bounded (past 8 MiB it is ended and replaced, counted in
// estuary_gateway_worker_backlog_overflows_total), and no counter goes backwards over that.

import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { clusterGateway, Conn, connsOnWorkers, waitWorkers, workerPids } from '../attacks/cluster-lib.ts';
import { parseStrict, sum } from '../attacks/prom-strict.ts';
import { startOrigin } from '../helpers/origin.ts';
import { rawRequest, sleep } from '../attacks/gateway-lib.ts';

afterAll(runTeardowns);

function freeze(pid: number): void {
  process.kill(pid, 'SIGSTOP');
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

async function scrape(port: number) {
  const c = await Conn.open(port);
  try {
    const a = await c.request('GET', '/metrics', {}, undefined, 20_000);
    return { status: a.status, samples: a.status === 200 ? parseStrict(a.body.toString()) : undefined };
  } finally {
    c.close();
  }
}

describe('gateway cluster: a frozen worker and new connections', () => {
  it('another worker answers them, and the frozen one serves none of them again when it thaws', async () => {
    const origin = await startOrigin();
    const gw = await clusterGateway(origin.url, 2);
    const [frozen] = workerPids(gw.child.pid) as [number, number];
    // Answers that may not be stored, so a connection served twice reaches the origin twice. GETs,
    // not writes: a write waits for every worker to drop the key, and restarts one that stays
    // frozen past 5 s (docs/CACHING.md, Unsafe methods), which would end this worker before it thaws.
    for (let i = 0; i < 6; i++) origin.route(`/post/${i}`, (_req, res) => {
      res.writeHead(200, { 'content-length': 2, 'cache-control': 'no-store' }).end('ok');
    });
    freeze(frozen);
    const t0 = Date.now();
    // Six new connections at once: about half of them are handed to the frozen worker first.
    const replies = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        rawRequest(gw.port, `GET /post/${i} HTTP/1.1\r\nHost: gw.test\r\nConnection: close\r\n\r\n`, 15_000).then((r) => ({
          status: r.status,
          ms: Date.now() - t0,
        })),
      ),
    );
    expect(replies.filter((r) => r.status !== 200 || r.ms > 6000), JSON.stringify(replies)).toEqual([]);
    process.kill(frozen, 'SIGCONT');
    await sleep(1500);
    expect(Array.from({ length: 6 }, (_, i) => origin.count(`/post/${i}`))).toEqual([1, 1, 1, 1, 1, 1]);
    // Thawed, it takes connections again.
    for (let i = 0; i < 6; i++) expect((await rawRequest(gw.port, `GET /post/0 HTTP/1.1\r\nHost: gw.test\r\nConnection: close\r\n\r\n`, 5000)).status).toBe(200);
  }, 60_000);
});

describe('gateway cluster: the only worker frozen for a while', () => {
  it('serves the connections handed to it while frozen once it thaws, each once', async () => {
    const origin = await startOrigin();
    for (let i = 0; i < 3; i++) {
      origin.route(`/late/${i}`, (_req, res) => {
        res.writeHead(200, { 'content-length': 2 }).end('ok');
      });
    }
    const gw = await clusterGateway(origin.url, 1);
    const [only] = workerPids(gw.child.pid) as [number];
    freeze(only);
    const pending = Array.from({ length: 3 }, (_, i) =>
      rawRequest(gw.port, `POST /late/${i} HTTP/1.1\r\nHost: gw.test\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx`, 15_000),
    );
    // Past the 2 s after which a hand-over counts as late: no other worker can have it.
    await sleep(3000);
    process.kill(only, 'SIGCONT');
    const replies = await Promise.all(pending);
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200]);
    await sleep(500);
    expect(Array.from({ length: 3 }, (_, i) => origin.count(`/late/${i}`))).toEqual([1, 1, 1]);
  }, 60_000);
});

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
    freeze(frozen);
    // 850 objects: about 10 MB of announcements, past the 8 MiB bound.
    for (let i = 0; i < 850; i++) expect((await a.request('GET', `/obj/${i}`)).status).toBe(200);
    await waitWorkers(gw.child.pid, 2, [frozen]);
    let after = await scrape(gw.port);
    for (let i = 0; i < 50 && after.status !== 200; i++) after = await scrape(gw.port);
    expect(after.status).toBe(200);
    expect(sum(after.samples!, 'estuary_gateway_worker_backlog_overflows_total')).toBe(1);
    expect(sum(after.samples!, 'estuary_gateway_worker_restarts_total')).toBe(1);
    expect(sum(after.samples!, 'estuary_gateway_requests_total')).toBeGreaterThanOrEqual(sum(before.samples!, 'estuary_gateway_requests_total') + 850);
  }, 60_000);
});
