// The agent against a real RabbitMQ and a real discovery server: beside an estuary gateway (a
// fake one serving the gateway's /metrics and /estuary/v1/summary contract) and beside a
// Squid-like forwarding proxy (load from /proc/net/dev), self-test gating, goodbye on stop, and the
// command itself stopped with SIGTERM.

import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { type AgentOptions, startAgent } from '../../agent/agent.ts';
import { parseHmacKey } from '../../lib/heartbeat-auth.ts';
import { onTeardown } from '../helpers/cleanup.ts';
import { NODE, startChild } from '../helpers/process.ts';
import { AMQP_URL, rabbitmqAvailable } from '../helpers/rabbitmq.ts';
import { testLog } from '../discovery/fixtures.ts';
import {
  eventually,
  getJson,
  NEVER,
  startFakeCache,
  startOrigin,
  startRelay,
  startTestDiscovery,
  uniqueExchange,
} from '../discovery/net.ts';

const rabbit = await rabbitmqAvailable();
const key = parseHmacKey('KEK=kek-secret-0123456789');
const BIN = new URL('../../bin/estuary.js', import.meta.url).pathname;

async function agentFor(o: Partial<AgentOptions> & Pick<AgentOptions, 'exchange' | 'cacheUrl'>) {
  const agent = await startAgent({
    amqpUrl: AMQP_URL,
    intervalMs: 60_000,
    selfTestTimeoutMs: 2000,
    uuid: `agent-${Math.random().toString(16).slice(2)}`,
    hostname: 'cache.test',
    publicIp: '127.0.0.1',
    kind: 'auto',
    upstream: 'cvmfs',
    maxLoad: 1000,
    key,
    site: 'KEK',
    reconnectMaxMs: 300,
    log: testLog().log,
    ...o,
  });
  let stopped = false;
  onTeardown(async () => {
    if (!stopped) await agent.stop(NEVER);
  });
  return Object.assign(agent, {
    async halt() {
      stopped = true;
      await agent.stop(NEVER);
    },
  });
}

type DiscoveryOptions = Omit<Parameters<typeof startTestDiscovery>[0], 'exchange'>;
type Origin = Awaited<ReturnType<typeof startOrigin>>;

/**
 * What each test stands on: its own exchange, an origin, a fake cache, and discovery on that
 * exchange (signed heartbeats only unless `discovery` says otherwise; it may use the origin).
 */
async function scene(
  discovery: (origin: Origin) => DiscoveryOptions = () => ({ keys: [key], shoalCompat: false }),
) {
  const exchange = uniqueExchange();
  const origin = await startOrigin();
  const cache = await startFakeCache();
  const d = await startTestDiscovery({ exchange, ...discovery(origin) });
  return { exchange, origin, cache, d };
}

describe.runIf(rabbit.ok)('agent → RabbitMQ → discovery → REST', () => {
  it('beside an estuary gateway: verified, load from /metrics, holdings from the summary, goodbye on stop', async () => {
    const { exchange, origin, cache: gw, d } = await scene((o) => ({
      keys: [key],
      shoalCompat: false,
      verify: true,
      testUrl: o.testUrl,
      retryBaseMs: 200,
    }));
    gw.gateway = {
      bytesSent: 0,
      summary: {
        version: 1,
        cache: { memoryBytes: 1000, diskBytes: 10_000, objects: 3 }, // memory holds copies of disk entries
        cvmfs: [{ repo: 'atlas.cern.ch', bytes: 8000 }],
        prefixes: [{ prefix: 's3.example.org/bucket', bytes: 2000 }],
      },
    };
    const agent = await agentFor({
      exchange,
      cacheUrl: gw.url,
      testUrl: origin.testUrl,
      lat: 36.1,
      lon: 140.1,
    });
    expect(agent.identity.kind).toBe('estuary');
    // Let the counter move by 100 KiB over the next round.
    gw.gateway.bytesSent = 100 * 1024;
    const nearest = await eventually(
      () =>
        getJson<Record<string, { hostname: string; load: number; verified: boolean }> | null>(
          `${d.url}/nearestcvmfs/3?lat=36&lon=140`,
        ),
      (j) => j !== null,
    );
    expect(nearest!['0']).toMatchObject({ hostname: 'cache.test', verified: true });
    const api = await getJson<{
      caches: { kind: string; holds: unknown; auth: string; keyId: string; site: string; load: number }[];
    }>(`${d.url}/api/v1/caches?holds=atlas.cern.ch&upstream=cvmfs`);
    expect(api.caches[0]).toMatchObject({ kind: 'estuary', auth: 'signed', keyId: 'KEK', site: 'KEK' });
    expect(api.caches[0]!.holds).toMatchObject({
      bytes: 10_000,
      cvmfs: [{ repo: 'atlas.cern.ch', bytes: 8000 }],
    });
    expect(api.caches[0]!.load).toBeGreaterThan(0);
    expect(
      (await getJson<{ caches: unknown[] }>(`${d.url}/api/v1/caches?holds=cms.cern.ch`)).caches,
    ).toHaveLength(0);
    await agent.halt();
    // Gone at once, long before the 180 s expiry.
    await eventually(
      () => d.registry.size,
      (n) => n === 0,
      5000,
    );
  });

  it('a gateway holding an over-long repository name stays advertised, without that name', async () => {
    const { exchange, origin, cache: gw, d } = await scene();
    const long = `${'x'.repeat(200)}.cern.ch`;
    gw.gateway = {
      bytesSent: 0,
      summary: {
        version: 1,
        cache: { memoryBytes: 10, diskBytes: 10, objects: 2 },
        cvmfs: [
          { repo: long, bytes: 5 },
          { repo: 'atlas.cern.ch', bytes: 5 },
        ],
        prefixes: [{ prefix: `b/${'p'.repeat(300)}`, bytes: 1 }],
      },
    };
    const t = testLog();
    const agent = await agentFor({ exchange, cacheUrl: gw.url, testUrl: origin.testUrl, log: t.log });
    const e = await eventually(
      () => d.registry.get(agent.identity.uuid),
      (x) => x !== undefined,
    );
    expect(e!.holds).toEqual({ bytes: 10, cvmfs: [{ repo: 'atlas.cern.ch', bytes: 5 }], prefixes: [] });
    expect(d.logLines().filter((l) => l.msg === 'heartbeat dropped')).toEqual([]);
    expect(t.lines().find((l) => String(l.msg).includes('over-long'))).toMatchObject({ left: 2 });
  });

  it('beside a Squid-like proxy: load from the interface, advertised only while the self-test passes', async () => {
    const { exchange, origin, cache: squid, d } = await scene();
    const agent = await agentFor({
      exchange,
      cacheUrl: squid.url,
      testUrl: origin.testUrl,
      iface: 'lo',
      kind: 'auto',
    });
    expect(agent.identity.kind).toBe('squid');
    await eventually(
      () => d.registry.size,
      (n) => n === 1,
    );
    // Traffic over loopback shows up as load on the next heartbeat.
    await new Promise<void>((resolve, reject) => {
      request(`${origin.url}/big?bytes=${4 * 1024 * 1024}`, (res) => res.resume().on('end', resolve))
        .on('error', reject)
        .end();
    });
    expect(await agent.tick()).toBe('published');
    await eventually(
      () => d.registry.get(agent.identity.uuid)?.load ?? 0,
      (l) => l > 0,
    );
    // The cache starts refusing: the agent stops advertising and says goodbye.
    squid.mode = 'denied';
    expect(await agent.tick()).toBe('self-test-failed');
    await eventually(
      () => d.registry.size,
      (n) => n === 0,
      5000,
    );
    expect(await agent.tick()).toBe('self-test-failed');
    squid.mode = 'ok';
    expect(await agent.tick()).toBe('published');
    await eventually(
      () => d.registry.size,
      (n) => n === 1,
    );
  });

  it('reconnects after the broker goes away and heartbeats at once', async () => {
    const { exchange, origin, cache: squid, d } = await scene(() => ({}));
    const relay = await startRelay(Number(new URL(AMQP_URL).port || 5672));
    const agent = await agentFor({
      exchange,
      amqpUrl: relay.url,
      cacheUrl: squid.url,
      testUrl: origin.testUrl,
      iface: 'lo',
      key: undefined,
      site: undefined,
    });
    await eventually(
      () => d.registry.size,
      (n) => n === 1,
    );
    await relay.kill();
    await eventually(
      () => agent.publisher.isConnected(),
      (c) => !c,
    );
    expect(await agent.tick()).toBe('not-connected');
    d.registry.remove(agent.identity.uuid);
    await relay.revive();
    // No tick by hand: reconnecting publishes straight away.
    await eventually(
      () => d.registry.size,
      (n) => n === 1,
      10_000,
    );
  });

  it('behind NAT: learns its external address from discovery and advertises it as external_ip', async () => {
    const { exchange, origin, cache: squid, d } = await scene();
    const agent = await agentFor({
      exchange,
      cacheUrl: squid.url,
      testUrl: origin.testUrl,
      iface: 'lo',
      publicIp: undefined,
      privateIp: '10.9.9.9',
      externalIpUrl: `${d.url}/external_ip`,
    });
    const e = await eventually(
      () => d.registry.get(agent.identity.uuid),
      (x) => x !== undefined,
    );
    // As Shoal's server does, the external address stands in for the missing public one: Shoal
    // clients only try public_ip and private_ip.
    expect(e).toMatchObject({ externalIp: '127.0.0.1', privateIp: '10.9.9.9', publicIp: '127.0.0.1' });
    // Reachable from outside its subnet, so offered to any client.
    const json = await getJson<Record<string, { external_ip: string; public_ip: string }> | null>(
      `${d.url}/nearest?ip=8.8.8.8`,
    );
    expect(json!['0']).toMatchObject({ external_ip: '127.0.0.1', public_ip: '127.0.0.1' });
  });

  it('a restarted discovery server has the cache back within one heartbeat interval', async () => {
    const { exchange, origin, cache: squid, d: first } = await scene();
    const agent = await agentFor({
      exchange,
      cacheUrl: squid.url,
      testUrl: origin.testUrl,
      iface: 'lo',
      intervalMs: 1000,
    });
    await eventually(
      () => first.registry.size,
      (n) => n === 1,
    );
    await first.stop(NEVER);
    const second = await startTestDiscovery({ exchange, keys: [key], shoalCompat: false });
    const t = Date.now();
    await eventually(
      () => second.registry.get(agent.identity.uuid),
      (e) => e !== undefined,
      10_000,
    );
    // One interval (1 s here), plus the time a round takes on a loaded machine.
    expect(Date.now() - t).toBeLessThan(4000);
  });

  it('`estuary agent` sends a goodbye on SIGTERM and exits 0', async () => {
    const { exchange, origin, cache: squid, d } = await scene();
    const child = startChild(
      NODE,
      [
        BIN,
        'agent',
        '--cache-url',
        squid.url,
        '--test-url',
        origin.testUrl,
        '--site',
        'KEK',
        '--public-ip',
        '127.0.0.1',
        '--interface',
        'lo',
        '--log-format',
        'json',
      ],
      {
        env: {
          ...process.env,
          ESTUARY_AMQP: AMQP_URL,
          ESTUARY_AGENT_EXCHANGE: exchange,
          ESTUARY_AGENT_HMAC_KEY: 'KEK=kek-secret-0123456789',
        },
      },
    );
    await eventually(
      () => d.registry.size,
      (n) => n === 1,
      15_000,
    );
    expect(await child.stop('SIGTERM')).toBe(0);
    expect(child.output()).toContain('goodbye sent');
    await eventually(
      () => d.registry.size,
      (n) => n === 0,
      5000,
    );
  });

  it('`estuary agent` refuses a per-site key for another site, in one line', async () => {
    const child = startChild(NODE, [
      BIN,
      'agent',
      '--cache-url',
      'http://127.0.0.1:1',
      '--hmac-key',
      'KEK=kek-secret-0123456789',
      '--site',
      'FNAL',
    ]);
    expect(await child.exited).toBe(2);
    expect(child.output().trim()).toMatch(
      /^estuary: the HMAC key is the key of site KEK but --site is FNAL.*Set --site KEK$/,
    );
  });
});
