// The status page with --workers 2. docs/CACHING.md ("Status page") promises that the page says
// first, in words, whatever is wrong — "an upstream failing (with its error)" — and that "its
// numbers come from the same aggregated text as /metrics, so with --workers N they count every
// worker". Whichever worker a browser's connection lands on, the page must tell the same story.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp.ts';
import { onTeardown } from '../../helpers/cleanup.ts';
import { freePort, rawOrigin, rawRequest, startGateway } from './gateway-lib.ts';

const PAGE = '/estuary/v1/status';

function get(port: number, target: string, timeoutMs = 20_000) {
  return rawRequest(port, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`, timeoutMs);
}

function proxied(gw: number, origin: number, path: string) {
  return rawRequest(gw, `GET http://127.0.0.1:${origin}${path} HTTP/1.1\r\nHost: 127.0.0.1:${origin}\r\nConnection: close\r\n\r\n`);
}

function workerPids(primary: number): number[] {
  const text = readFileSync(`/proc/${primary}/task/${primary}/children`, 'utf8');
  return text.trim().split(/\s+/).filter(Boolean).map(Number);
}

/** The first line of the page: the problems, or the one "Serving" line. */
const headline = (html: string) => [...html.matchAll(/<p class="sum[^"]*">([^<]*)<\/p>/g)].map((m) => m[1]).join(' | ');

describe('status page with --workers 2', () => {
  it('every page names the failing upstream and its error, whichever worker draws it', async () => {
    const dead = await freePort(); // nothing listens here: connection refused
    const gw = await startGateway(['--allow-dest', '@loopback', '--workers', '2', '--cache-dir', await tempDir('atk-status-')]);
    const r = await proxied(gw.port, dead, '/obj');
    expect(r.status).toBe(502);
    const lines: string[] = [];
    for (let i = 0; i < 8; i++) lines.push(headline((await get(gw.port, PAGE)).body.toString()));
    // Every page says the upstream is failing (the max-aggregated timestamps do that) ...
    for (const l of lines) expect(l).toMatch(/Upstream @loopback is failing/);
    // ... and every page also says why, as the docs promise. Today the error is remembered only by
    // the worker that saw it, so about every other page shows the failure without its cause.
    for (const l of lines) expect(l, `a page without the error: ${l}`).toMatch(/ECONNREFUSED|refused/);
  }, 60_000);

  it('a worker that does not answer the aggregation does not turn the page into "Serving, 0 requests"', async () => {
    const origin = await rawOrigin((s) => s.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nCache-Control: max-age=600\r\nConnection: close\r\n\r\nok'));
    const dead = await freePort();
    const gw = await startGateway(['--allow-dest', '@loopback', '--workers', '2', '--cache-dir', await tempDir('atk-status-')]);
    for (let i = 0; i < 6; i++) expect((await proxied(gw.port, origin, `/o${i}`)).status).toBe(200);
    expect((await proxied(gw.port, dead, '/x')).status).toBe(502);
    const before = (await get(gw.port, PAGE)).body.toString();
    expect(headline(before)).toMatch(/failing/);

    // One worker stops answering (a stuck event loop: a long synchronous job, a debugger, a
    // process frozen by the OOM killer's cgroup freeze). The other one still serves the page.
    const [stuck] = workerPids(gw.child.pid);
    expect(stuck).toBeDefined();
    process.kill(stuck!, 'SIGSTOP');
    onTeardown(() => {
      try {
        process.kill(stuck!, 'SIGCONT');
      } catch {
        // already gone
      }
    });
    // Connections handed to the stopped worker hang; ask several times and read those answered.
    const replies = await Promise.all([1, 2, 3, 4, 5, 6].map(() => get(gw.port, PAGE, 9_000)));
    const pages = replies.filter((r) => r.status === 200).map((r) => r.body.toString());
    process.kill(stuck!, 'SIGCONT');
    expect(pages.length).toBeGreaterThan(0);
    for (const page of pages) {
      // What it should do: say that a worker did not answer (a problem, in words), and keep what it
      // knows — the failing upstream, the requests the answering worker and the primary counted.
      // Today the aggregation times out after 5 s and the page is drawn from the text
      // "# aggregation failed": "✔ Serving: hit ratio – over 0 requests, 0 upstreams answering".
      expect(headline(page), headline(page)).not.toMatch(/Serving/);
      expect(headline(page)).toMatch(/⚠/);
      expect(page).not.toMatch(/over 0 requests/);
    }
  }, 60_000);

  it('the page asked for just as a worker dies says so, rather than "Serving, 0 requests, 0 restarts"', async () => {
    const origin = await rawOrigin((s) => s.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nCache-Control: max-age=600\r\nConnection: close\r\n\r\nok'));
    const gw = await startGateway(['--allow-dest', '@loopback', '--workers', '2', '--cache-dir', await tempDir('atk-status-')]);
    for (let i = 0; i < 6; i++) expect((await proxied(gw.port, origin, `/k${i}`)).status).toBe(200);
    const [victim] = workerPids(gw.child.pid);
    // The moment an operator opens the page is the moment something is wrong: a worker crashing.
    // Today the primary sends its aggregation request to the dying worker (still connected for a
    // moment), waits prom-client's 5 s for an answer that never comes, and the page is drawn from
    // "# aggregation failed": ✔ Serving, 0 requests, 0 restarts, 0 deaths.
    process.kill(victim!, 'SIGKILL');
    const pages = (await Promise.all([1, 2, 3].map(() => get(gw.port, PAGE, 15_000)))).map((r) => r.body.toString());
    for (const page of pages) {
      expect(headline(page), headline(page)).not.toMatch(/Serving/);
      expect(page).not.toMatch(/over 0 requests/);
    }
  }, 60_000);

  it('/metrics does not answer 200 with no samples while a worker does not answer', async () => {
    const origin = await rawOrigin((s) => s.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok'));
    const gw = await startGateway(['--allow-dest', '@loopback', '--workers', '2', '--cache-dir', await tempDir('atk-status-')]);
    for (let i = 0; i < 4; i++) expect((await proxied(gw.port, origin, `/m${i}`)).status).toBe(200);
    const [stuck] = workerPids(gw.child.pid);
    process.kill(stuck!, 'SIGSTOP');
    onTeardown(() => {
      try {
        process.kill(stuck!, 'SIGCONT');
      } catch {
        // already gone
      }
    });
    const replies = await Promise.all([1, 2, 3, 4, 5, 6].map(() => get(gw.port, '/metrics', 9_000)));
    process.kill(stuck!, 'SIGCONT');
    const answered = replies.filter((r) => r.status !== 0);
    expect(answered.length).toBeGreaterThan(0);
    for (const r of answered) {
      // A scrape that gets 200 and no series records every counter as gone (rate() breaks, alerts on
      // absent() fire on the wrong cause). Either an error status Prometheus records as a failed
      // scrape (up == 0), or the samples that could be collected — at least the primary's own.
      // Today: 200 with the single line "# aggregation failed: Error: Operation timed out."
      if (r.status === 200) expect(r.body.toString()).toMatch(/^estuary_gateway_worker_restarts_total /m);
      else expect(r.status).toBeGreaterThanOrEqual(500);
    }
  }, 60_000);
});
