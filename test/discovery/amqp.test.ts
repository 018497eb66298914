// Discovery against a real RabbitMQ: Shoal's exact heartbeat, every kind of bad message, expiry,
// restart, two servers side by side, and the broker going away (through a relay we can kill).

import { describe, expect, it } from 'vitest';
import { parseHmacKey } from '../../lib/heartbeat-auth.ts';
import { NODE, startChild } from '../helpers/process.ts';
import { AMQP_URL, rabbitmqAvailable } from '../helpers/rabbitmq.ts';
import { heartbeat } from './fixtures.ts';
import {
  eventually,
  getJson,
  NEVER,
  rawPublisher,
  startRelay,
  startTestDiscovery,
  uniqueExchange,
} from './net.ts';

const rabbit = await rabbitmqAvailable();
const key = parseHmacKey('shared-secret-0123456789');
const BIN = new URL('../../bin/estuary.js', import.meta.url).pathname;

/** A heartbeat exactly as Shoal's current agent sends it (timestamp filled in at send time). */
const shoalHeartbeat = () => ({
  uuid: '9f1c0a4e6b2d11efa1b20242ac130003',
  hostname: 'squid.site.example.org',
  cache_port: 3128,
  cache_type: 'squid',
  verified: true,
  max_load: 122000,
  upstream: 'both',
  timestamp: Date.now() / 1000,
  load: 2048,
  private_ip: '10.20.30.40',
  public_ip: '130.87.1.1',
});

async function metric(url: string, reason: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = new RegExp(`estuary_discovery_heartbeats_total\\{result="${reason}"\\} (\\d+)`).exec(text);
  return m ? Number(m[1]) : 0;
}

describe.runIf(rabbit.ok)('discovery over RabbitMQ', () => {
  it("accepts Shoal's exact heartbeat on the compatibility path and answers in Shoal's shape", async () => {
    const exchange = uniqueExchange();
    const d = await startTestDiscovery({ exchange, shoalCompat: true });
    const publish = await rawPublisher(exchange);
    await publish(shoalHeartbeat());
    const json = await eventually(
      () => getJson<Record<string, Record<string, unknown>> | null>(`${d.url}/nearest`),
      (j) => j !== null,
    );
    expect(json!['0']).toMatchObject({
      hostname: 'squid.site.example.org',
      squid_port: 3128,
      public_ip: '130.87.1.1',
      private_ip: '10.20.30.40',
      external_ip: null,
      load: 2048,
      max_load: 122000,
      cache_type: 'squid',
      upstream: 'both',
      verified: true,
    });
    const api = await getJson<{ caches: { auth: string }[] }>(`${d.url}/api/v1/caches`);
    expect(api.caches[0]!.auth).toBe('unsigned');
    const page = await (await fetch(`${d.url}/`)).text();
    expect(page).toContain('squid.site.example.org');
    expect(page).toContain('unsigned (Shoal compatibility)');
    expect(page).not.toContain('<script');
  });

  it('drops unsigned heartbeats when Shoal compatibility is off, with a counter', async () => {
    const exchange = uniqueExchange();
    const d = await startTestDiscovery({ exchange, shoalCompat: false, keys: [key] });
    const publish = await rawPublisher(exchange);
    await publish(shoalHeartbeat());
    await publish(heartbeat({ uuid: 'signed-one' }), { key });
    await eventually(
      () => d.registry.size,
      (n) => n === 1,
    );
    expect(d.registry.get('signed-one')?.auth).toBe('signed');
    expect(await metric(d.url, 'unsigned')).toBe(1);
  });

  it('drops a heartbeat whose signature header is a number or a table, even in Shoal compatibility', async () => {
    const exchange = uniqueExchange();
    const d = await startTestDiscovery({ exchange, shoalCompat: true, keys: [key] });
    const publish = await rawPublisher(exchange);
    await publish(heartbeat({ uuid: 'numeric' }), { headers: { 'x-estuary-signature': 12345 } });
    await publish(heartbeat({ uuid: 'table' }), { headers: { 'x-estuary-signature': { a: 1 } } });
    await publish(shoalHeartbeat());
    await eventually(
      () => metric(d.url, 'bad-signature'),
      (n) => n === 2,
    );
    await eventually(
      () => d.registry.size,
      (n) => n === 1,
    );
    expect(d.registry.get('numeric')).toBeUndefined();
    expect(d.registry.get('table')).toBeUndefined();
  });

  it('drops every kind of bad message with a log line and a counter, and keeps serving', async () => {
    const exchange = uniqueExchange();
    const d = await startTestDiscovery({
      exchange,
      shoalCompat: false,
      keys: [key, parseHmacKey('KEK=kek-secret-0123456789')],
      floodBurst: 3,
      floodPerSecond: 0.01,
    });
    const publish = await rawPublisher(exchange);
    const good = heartbeat({ uuid: 'good' });
    const other = parseHmacKey('shared-other-secret-0123');
    await publish(good); // unsigned
    await publish(good, { key: other }); // bad signature
    await publish(good, { key: parseHmacKey('CERN=cern-secret-0123456789') }); // unknown key id
    await publish(heartbeat({ uuid: 'liar' }, { site: 'FNAL' }), {
      key: parseHmacKey('KEK=kek-secret-0123456789'),
    });
    await publish('{"uuid": "x", ', { key }); // bad JSON
    await publish({ uuid: 'x', hostname: 'h' }, { key }); // missing fields
    await publish(heartbeat({ uuid: 'absurd', load: -1 }), { key });
    await publish(heartbeat({ uuid: 'old', timestamp: 1 }), { key });
    await publish(Buffer.alloc(64 * 1024, 0x20), { key }); // oversized
    for (let i = 0; i < 5; i++) await publish(heartbeat({ uuid: 'flooder' }), { key });
    await eventually(
      () => metric(d.url, 'flood'),
      (n) => n === 2,
    );
    const expected = {
      unsigned: 1,
      'bad-signature': 1,
      'unknown-key': 1,
      'site-mismatch': 1,
      'bad-json': 1,
      invalid: 2,
      'absurd-time': 1,
      oversized: 1,
    };
    for (const [reason, n] of Object.entries(expected)) expect(await metric(d.url, reason), reason).toBe(n);
    expect([...d.registry.values()].map((e) => e.id)).toEqual(['flooder']);
    const reasons = new Set(
      d
        .logLines()
        .filter((l) => l.msg === 'heartbeat dropped')
        .map((l) => l.reason),
    );
    expect(reasons).toEqual(new Set([...Object.keys(expected), 'flood']));
    expect((await fetch(`${d.url}/healthz`)).status).toBe(200);
  });

  it('expires a silent cache, sweeping on its own timer', async () => {
    const exchange = uniqueExchange();
    const d = await startTestDiscovery({ exchange, expiryMs: 1000, sweepMs: 100 });
    const publish = await rawPublisher(exchange);
    await publish(heartbeat({ uuid: 'mortal' }));
    await eventually(
      () => d.registry.size,
      (n) => n === 1,
    );
    const t = Date.now();
    await eventually(
      () => d.registry.size,
      (n) => n === 0,
      5000,
    );
    expect(Date.now() - t).toBeGreaterThanOrEqual(800);
  });

  it('two servers side by side each see every heartbeat and give the same answers', async () => {
    const exchange = uniqueExchange();
    const a = await startTestDiscovery({ exchange });
    const b = await startTestDiscovery({ exchange });
    const publish = await rawPublisher(exchange);
    for (let i = 0; i < 5; i++) {
      await publish(
        heartbeat(
          { uuid: `c${i}`, hostname: `c${i}.example.org`, load: i * 100 },
          { lat: 10 * i, lon: 5 * i },
        ),
      );
    }
    await eventually(
      () => a.registry.size + b.registry.size,
      (n) => n === 10,
    );
    const q = '/nearest/3?lat=20&lon=10';
    const [ja, jb] = await Promise.all([getJson(`${a.url}${q}`), getJson(`${b.url}${q}`)]);
    const strip = (j: unknown) =>
      Object.values(j as Record<string, { hostname: string; distance: number }>).map((e) => [
        e.hostname,
        e.distance,
      ]);
    expect(strip(ja)).toEqual(strip(jb));
    expect(strip(ja)).toHaveLength(3);
    expect(await (await fetch(`${a.url}/wpad.dat?lat=20&lon=10`)).text()).toBe(
      await (await fetch(`${b.url}/wpad.dat?lat=20&lon=10`)).text(),
    );
  });

  it('a restarted server rebuilds its registry from the next heartbeats', async () => {
    const exchange = uniqueExchange();
    const publish = await rawPublisher(exchange);
    const first = await startTestDiscovery({ exchange });
    await publish(heartbeat({ uuid: 'steady' }));
    await eventually(
      () => first.registry.size,
      (n) => n === 1,
    );
    await first.stop(NEVER);
    const second = await startTestDiscovery({ exchange });
    expect(second.registry.size).toBe(0);
    // The agents' next interval: one heartbeat each.
    await publish(heartbeat({ uuid: 'steady' }));
    await eventually(
      () => second.registry.size,
      (n) => n === 1,
    );
  });

  it('survives the broker going away and coming back', async () => {
    const exchange = uniqueExchange();
    const relay = await startRelay(
      Number(new URL(process.env.AMQP_URL ?? 'amqp://127.0.0.1:5672').port || 5672),
    );
    const d = await startTestDiscovery({ exchange, amqpUrl: relay.url, reconnectMaxMs: 300 });
    const publish = await rawPublisher(exchange);
    await publish(heartbeat({ uuid: 'before' }));
    await eventually(
      () => d.registry.size,
      (n) => n === 1,
    );
    await relay.kill();
    await eventually(
      () => d.consumer.isConnected(),
      (c) => !c,
    );
    // The server keeps answering from memory while the broker is away.
    expect(await getJson(`${d.url}/nearest`)).not.toBeNull();
    await relay.revive();
    await eventually(
      () => d.consumer.isConnected(),
      (c) => c,
    );
    await publish(heartbeat({ uuid: 'after' }));
    await eventually(
      () => d.registry.get('after'),
      (e) => e !== undefined,
    );
  });
});

describe.runIf(rabbit.ok)('`estuary discovery` as a process', () => {
  it('starts from flags and environment, answers, and stops cleanly on SIGTERM', async () => {
    const exchange = uniqueExchange();
    const child = startChild(
      NODE,
      [
        BIN,
        'discovery',
        '--listen',
        '127.0.0.1:0',
        '--exchange',
        exchange,
        '--log-format',
        'json',
        '--geo-db',
        'none',
      ],
      {
        env: {
          ...process.env,
          ESTUARY_AMQP: AMQP_URL,
          ESTUARY_DISCOVERY_HMAC_KEY: 'shared-secret-0123456789',
        },
      },
    );
    const url = (await child.waitFor(/"url":"(http:\/\/127\.0\.0\.1:\d+)"/))[1]!;
    await child.waitFor(/consuming heartbeats/);
    const publish = await rawPublisher(exchange);
    await publish(heartbeat({ uuid: 'via-cli' }), { key });
    await eventually(
      () => getJson<{ caches: unknown[] }>(`${url}/api/v1/registry`),
      (r) => r.caches.length === 1,
    );
    expect(child.output()).not.toContain('shared-secret');
    const t = Date.now();
    expect(await child.stop('SIGTERM')).toBe(0);
    expect(Date.now() - t).toBeLessThan(8000);
  });

  it('refuses to start with no key and no Shoal compatibility, in one line', async () => {
    const child = startChild(NODE, [BIN, 'discovery', '--listen', '127.0.0.1:0']);
    expect(await child.exited).toBe(2);
    // One sentence for the user; the log line beside it carries the code (command.test.ts).
    const sentences = child.output().split('\n').filter((l) => l.startsWith('estuary: '));
    expect(sentences).toHaveLength(1);
    expect(sentences[0]).toMatch(/^estuary: no --hmac-key given and --shoal-compat is off/);
  });

  it('a consumer stopped while it is still connecting stops, and leaves no connection', async () => {
    const { startConsumer } = await import('../../discovery/consumer.ts');
    const { testLog } = await import('./fixtures.ts');
    const t = testLog();
    const consumer = startConsumer({ url: AMQP_URL, exchange: uniqueExchange(), log: t.log, onMessage: () => {} });
    const late = new Promise<string>((r) => setTimeout(() => r('stop() still waiting'), 5000).unref());
    expect(await Promise.race([consumer.stop().then(() => 'stopped'), late])).toBe('stopped');
    expect(consumer.isConnected()).toBe(false);
    expect(t.lines().some((l) => l.msg === 'consuming heartbeats')).toBe(false);
  });
});
