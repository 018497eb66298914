// State the gateway keeps per destination or per client must stay bounded by its configuration,
// not by what clients ask for: a forward proxy asked for thousands of distinct origins must not
// grow /metrics or its memory without end.

import { describe, expect, it } from 'vitest';
import { send } from './helpers/client.ts';
import { startTestGateway } from './helpers/gateway.ts';
import { fixed, startOrigin } from './helpers/origin.ts';

/**
 * Distinct origins that refuse connections: port 1 (tcpmux, never served here) on distinct loopback
 * addresses, so no server another test opens meanwhile can answer them.
 */
function refusingOrigins(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `http://127.77.${i >> 8}.${(i & 255) + 1}:1`);
}

function seriesOf(text: string, name: string): string[] {
  return text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name}_count{`));
}

describe('per-destination state', async () => {
  const origin = await startOrigin({ '/ok': fixed('ok', { 'cache-control': 'no-store' }) });

  it('keeps one metric series per --allow-dest entry, however many origins clients name', async () => {
    const gw = await startTestGateway();
    for (const o of refusingOrigins(150)) {
      const r = await send(gw.url, `${o}/x`, { method: 'M-SEARCH' });
      expect(r.status).toBe(502);
      expect((await send(gw.url, `${o}/x`)).status).toBe(502);
    }
    expect((await send(gw.url, `${origin.url}/ok`)).status).toBe(200);
    const text = await gw.metrics.text();
    const errors = seriesOf(text, 'estuary_gateway_upstream_errors_total');
    expect(errors.length).toBe(1);
    expect(errors[0]).toMatch(/upstream="@loopback",reason="connection_refused"/);
    expect(seriesOf(text, 'estuary_gateway_upstream_latency_seconds')).toHaveLength(1);
    expect(text).not.toMatch(/method="M-SEARCH"/);
    expect(gw.upstreams.downCount).toBe(0);
  });

  it('still tries a failed server of a ring last, and only ring servers are remembered', async () => {
    const [dead] = refusingOrigins(1);
    const gw = await startTestGateway({ upstream: [`cvmfs=${dead},${origin.url}`] });
    expect((await send(gw.url, '/ok')).status).toBe(200);
    expect(gw.upstreams.downCount).toBe(1);
    expect(gw.upstreams.order([dead!, origin.url])[0]).toBe(origin.url);
  });
});

describe('--max-connections', async () => {
  const origin = await startOrigin({ '/ok': fixed('ok', { 'cache-control': 'max-age=60' }) });

  it('answers connections over the limit with 503 and Proxy-Status, and serves again once one closes', async () => {
    const gw = await startTestGateway({ maxConnections: 2 });
    const { connect } = await import('node:net');
    const u = new URL(gw.url);
    const held = await Promise.all(
      [0, 1].map(
        () =>
          new Promise<import('node:net').Socket>((resolve) => {
            const s = connect(Number(u.port), u.hostname, () => resolve(s));
          }),
      ),
    );
    const over = await send(gw.url, `${origin.url}/ok`);
    expect(over.status).toBe(503);
    expect(String(over.headers['proxy-status'])).toMatch(/--max-connections/);
    expect(over.headers['retry-after']).toBe('1');
    held[0]!.destroy();
    await new Promise((r) => setTimeout(r, 50));
    const ok = await send(gw.url, `${origin.url}/ok`);
    expect(ok.status).toBe(200);
    held[1]!.destroy();
  });
});

describe('slow readers of a large cached object', async () => {
  const body = Buffer.alloc(20 * 1024 * 1024, 7);
  const origin = await startOrigin({ '/big': fixed(body, { 'cache-control': 'max-age=600' }) });

  it('cost tens of KB each, not megabytes', async () => {
    const { startGatewayProcess } = await import('./helpers/gateway.ts');
    const { readFileSync } = await import('node:fs');
    const { request } = await import('node:http');
    const gw = await startGatewayProcess(['--allow-dest', '@loopback']);
    const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${gw.child.pid}/status`, 'utf8'))![1]) / 1024;
    expect((await send(gw.url, `${origin.url}/big`)).body.length).toBe(body.length);
    const before = rss();
    const u = new URL(gw.url);
    const readers = await Promise.all(
      Array.from(
        { length: 100 },
        () =>
          new Promise<import('node:http').ClientRequest>((resolve) => {
            const req = request({ host: u.hostname, port: u.port, path: `${origin.url}/big`, agent: false }, (res) => {
              res.pause(); // reads nothing more: the kernel buffers fill, then the gateway holds the rest
              resolve(req);
            });
            req.end();
          }),
      ),
    );
    await new Promise((r) => setTimeout(r, 1500));
    const grown = rss() - before;
    for (const r of readers) r.destroy();
    // Measured: about 2 MiB per reader with fixed 1 MiB reads, 13 MiB for all 100 with pooled
    // adaptive slices (that includes each connection's own HTTP state).
    expect(grown).toBeLessThan(30);
    expect(await gw.child.stop('SIGTERM')).toBe(0);
  });
});
