// Hostile heartbeats against a real `estuary discovery` process fed over the real RabbitMQ. The
// docs promise: "nothing a network peer sends can crash the server"; "Nothing a message holds can
// throw out of the consumer".

import { createHmac, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import amqp from 'amqplib';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { NODE, startChild } from '../../helpers/process.ts';
import { AMQP_URL, rabbitmqAvailable } from '../../helpers/rabbitmq.ts';

afterAll(runTeardowns);

const rabbit = await rabbitmqAvailable();
const BIN = new URL('../../../bin/estuary.js', import.meta.url).pathname;
const KEY = 'attack-test-shared-secret';

async function startDiscovery(exchange: string, extra: string[] = []) {
  const child = startChild(NODE, [
    BIN, 'discovery', '--listen', '127.0.0.1:0', '--amqp', AMQP_URL, '--exchange', exchange,
    '--hmac-key', KEY, '--shoal-compat', '--geo-db', 'none', '--test-url', 'http://test.example/x',
    '--log-format', 'json', ...extra,
  ]);
  onTeardown(() => child.stop('SIGKILL', 1000).then(() => undefined));
  const m = await child.waitFor(/"url":"(http:\/\/127\.0\.0\.1:\d+)"[^\n]*discovery listening/, 20_000);
  await child.waitFor(/consuming heartbeats/, 20_000);
  return { child, url: m[1]! };
}

async function publisher(exchange: string) {
  const conn = await amqp.connect(AMQP_URL);
  onTeardown(() => conn.close().catch(() => undefined));
  const ch = await conn.createChannel();
  return (body: object, signed = false) => {
    const bytes = Buffer.from(JSON.stringify(body));
    const headers = signed
      ? { 'x-estuary-signature': `sha256=${createHmac('sha256', KEY).update(bytes).digest('hex')}`, 'x-estuary-key-id': 'shared' }
      : {};
    ch.publish(exchange, 'info', bytes, { contentType: 'application/json', headers });
  };
}

const heartbeat = (uuid: string, publicIp: string) => ({
  uuid, hostname: `${uuid}.example.org`, timestamp: Date.now() / 1000, load: 1,
  cache_port: 3128, cache_type: 'squid', public_ip: publicIp,
});

describe.runIf(rabbit.ok)('a heartbeat with an IPv6 zone id in its address', () => {
  for (const [label, signed] of [['unsigned (Shoal compatibility)', false], ['signed', true]] as const) {
    it(`${label}: discovery survives and drops or keeps the cache, never exits`, async () => {
      const exchange = `atk-disc-${randomBytes(4).toString('hex')}`;
      const d = await startDiscovery(exchange);
      const publish = await publisher(exchange);
      publish(heartbeat('zone-id', 'fd00::1%lo'), signed);
      publish(heartbeat('after', '192.0.2.10'), signed);
      const died = await Promise.race([
        d.child.exited.then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), 4000)),
      ]);
      expect(d.child.output()).not.toMatch(/ReferenceError|Cannot access 'timer'/);
      expect(died).toBe(false);
      const health = (await (await fetch(`${d.url}/healthz`)).json()) as { amqp: string };
      expect(health.amqp).toBe('connected');
    });
  }
});

describe.runIf(rabbit.ok)('loopback written in another IPv6 form', () => {
  it('is dropped like 127.0.0.1 and ::1: never verified through discovery\'s own host, never offered', async () => {
    // A proxy on discovery's own loopback that passes every verification fetch.
    const local = createServer((_req, res) => res.end('whitelist'));
    await new Promise<void>((r) => local.listen(0, '127.0.0.1', r));
    onTeardown(() => new Promise<void>((r) => local.close(() => r())));
    const port = (local.address() as AddressInfo).port;

    const exchange = `atk-disc-${randomBytes(4).toString('hex')}`;
    const d = await startDiscovery(exchange, ['--verify-timeout', '1s']);
    const publish = await publisher(exchange);
    const forms = ['::ffff:7f00:1', '0:0:0:0:0:ffff:127.0.0.1', '0::1', '::0:1', '0000:0000:0000:0000:0000:0000:0000:0001'];
    forms.forEach((ip, i) => publish({ ...heartbeat(`loop-${i}`, ip), cache_port: port }, true));
    publish(heartbeat('marker', '192.0.2.10'), true);
    await d.child.waitFor(/"uuid":"marker"/, 10_000);
    await new Promise((r) => setTimeout(r, 1500)); // let verification run

    const registry = (await (await fetch(`${d.url}/api/v1/registry`)).json()) as { caches: { id: string }[] };
    expect(registry.caches.map((c) => c.id).filter((id) => id.startsWith('loop-'))).toEqual([]);
    const nearest = await (await fetch(`${d.url}/nearest/50`)).text();
    expect(nearest).not.toContain('ffff');
    expect(nearest).not.toMatch(/"public_ip": "0/);
  });
});

describe.runIf(rabbit.ok)('a cache that answers every verification fetch with a page of its own', () => {
  it('is not verified (DISCOVERY.md: handed out only if the fetch "returns the expected file")', async () => {
    const origin = createServer((_req, res) => res.end('the real whitelist\n'));
    await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
    onTeardown(() => new Promise<void>((r) => origin.close(() => r())));
    const liar = createServer((_req, res) => res.end('<html>forged by the cache</html>'));
    await new Promise<void>((r) => liar.listen(0, '127.0.0.1', r));
    onTeardown(() => new Promise<void>((r) => liar.close(() => r())));
    const originPort = (origin.address() as AddressInfo).port;
    const liarPort = (liar.address() as AddressInfo).port;

    const exchange = `atk-disc-${randomBytes(4).toString('hex')}`;
    const d = await startDiscovery(exchange, ['--allow-host-addresses', '--test-url', `http://127.0.0.1:${originPort}/x`]);
    const publish = await publisher(exchange);
    publish({ ...heartbeat('liar', '127.0.0.1'), cache_port: liarPort }, true);
    await d.child.waitFor(/"uuid":"liar"/, 10_000);
    await new Promise((r) => setTimeout(r, 1500));
    const one = (await (await fetch(`${d.url}/api/v1/caches/liar`)).json()) as { cache: { verification: { state: string } } };
    expect(one.cache.verification.state).not.toBe('ok');
    expect(await (await fetch(`${d.url}/nearest/5`)).text()).toBe('null');
  });
});

describe.runIf(rabbit.ok)('an agent whose clock was an hour fast when it said goodbye', () => {
  it('is listed again once it restarts with the right time (not locked out as "replay" for an hour)', async () => {
    const exchange = `atk-disc-${randomBytes(4).toString('hex')}`;
    const d = await startDiscovery(exchange, ['--no-verify']);
    const conn = await amqp.connect(AMQP_URL);
    onTeardown(() => conn.close().catch(() => undefined));
    const ch = await conn.createChannel();
    const send = (body: object, key: string) => {
      const bytes = Buffer.from(JSON.stringify(body));
      const sig = `sha256=${createHmac('sha256', KEY).update(bytes).digest('hex')}`;
      ch.publish(exchange, key, bytes, { contentType: 'application/json', headers: { 'x-estuary-signature': sig, 'x-estuary-key-id': 'shared' } });
    };
    const fast = { ...heartbeat('clock-fast', '192.0.2.20'), timestamp: Date.now() / 1000 + 3600 };
    send({ ...fast, estuary_v1: { version: 1, cacheKind: 'squid', goodbye: true } }, 'goodbye');
    await new Promise((r) => setTimeout(r, 500));
    send(heartbeat('clock-fast', '192.0.2.20'), 'info'); // restarted, NTP has fixed the clock
    await d.child.waitFor(/"uuid":"clock-fast"[^\n]*"msg":"(cache registered|heartbeat dropped)"/, 10_000);
    await new Promise((r) => setTimeout(r, 500));
    const r = await fetch(`${d.url}/api/v1/caches/clock-fast`);
    expect(d.child.output()).not.toMatch(/"reason":"replay"[^\n]*clock-fast/);
    expect(r.status).toBe(200);
  });
});
