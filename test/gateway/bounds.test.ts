// State the gateway keeps per destination or per client must stay bounded by its configuration,
// not by what clients ask for: a forward proxy asked for thousands of distinct origins must not
// grow /metrics or its memory without end.

import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { send } from './helpers/client.ts';
import { startTestGateway } from './helpers/gateway.ts';
import { fixed, startOrigin } from './helpers/origin.ts';

/** Ports nothing listens on: opened and closed again, so connecting to them is refused. */
async function closedPorts(n: number): Promise<number[]> {
  const ports: number[] = [];
  for (let i = 0; i < n; i++) {
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    ports.push((srv.address() as { port: number }).port);
    await new Promise((r) => srv.close(r));
  }
  return ports;
}

function seriesOf(text: string, name: string): string[] {
  return text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name}_count{`));
}

describe('per-destination state', async () => {
  const origin = await startOrigin({ '/ok': fixed('ok', { 'cache-control': 'no-store' }) });

  it('keeps one metric series per --allow-dest entry, however many origins clients name', async () => {
    const gw = await startTestGateway();
    const ports = await closedPorts(150);
    for (const p of ports) {
      const r = await send(gw.url, `http://127.0.0.1:${p}/x`, { method: 'M-SEARCH' });
      expect([501, 502]).toContain(r.status);
      await send(gw.url, `http://127.0.0.1:${p}/x`);
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
    const [dead] = await closedPorts(1);
    const gw = await startTestGateway({
      upstream: [`cvmfs=http://127.0.0.1:${dead},${origin.url}`],
    });
    expect((await send(gw.url, '/ok')).status).toBe(200);
    expect(gw.upstreams.downCount).toBe(1);
    expect(gw.upstreams.order([`http://127.0.0.1:${dead}`, origin.url])[0]).toBe(origin.url);
  });
});
