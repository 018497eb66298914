// Real network pieces for agent and discovery tests, all on loopback and all torn down after the
// file: an origin, a tiny forwarding proxy that can also play an estuary gateway, a TCP relay that
// stands in for the broker going away, and AMQP helpers with per-test exchange names.

import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, connect, type Socket } from 'node:net';
import { connect as amqpConnect } from 'amqplib';
import { startDiscovery, type Discovery, type DiscoveryOptions } from '../../discovery/service.ts';
import { type HmacKey, sign } from '../../lib/heartbeat-auth.ts';
import { SHOAL_EXCHANGE_TYPE } from '../../lib/heartbeat.ts';
import { onTeardown } from '../helpers/cleanup.ts';
import { AMQP_URL } from '../helpers/rabbitmq.ts';
import { testLog } from './fixtures.ts';

export const WHITELIST_PATH = '/cvmfs/test.example.org/.cvmfswhitelist';
export const WHITELIST_BODY = '20261121000000\nE20261221000000\nNtest.example.org\n--\n0123abcd\n';

async function listen(server: Server, port = 0): Promise<number> {
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  onTeardown(() => new Promise<void>((r) => server.close(() => r())));
  return (server.address() as AddressInfo).port;
}

/** An origin serving the whitelist and a few bytes at any other path. */
export async function startOrigin(): Promise<{ url: string; testUrl: string; hits: () => number }> {
  let hits = 0;
  const server = createServer((req, res) => {
    hits++;
    if (req.url === WHITELIST_PATH) res.end(WHITELIST_BODY);
    else res.end(randomBytes(Number(new URL(req.url ?? '/', 'http://x').searchParams.get('bytes') ?? 100)));
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    testUrl: `http://127.0.0.1:${port}${WHITELIST_PATH}`,
    hits: () => hits,
  };
}

export type ProxyMode = 'ok' | 'denied' | 'broken';

export interface FakeCache {
  readonly url: string;
  readonly port: number;
  mode: ProxyMode;
  /** When set, answers /metrics and /estuary/v1/summary like an estuary gateway. */
  gateway?: { bytesSent: number; summary: unknown };
  readonly proxied: () => number;
}

/**
 * A forwarding proxy for absolute-form requests (what CVMFS clients and Squid speak). In 'denied'
 * mode it answers like a Squid refusing access; in 'broken' mode it drops the connection.
 */
export async function startFakeCache(port = 0): Promise<FakeCache> {
  let proxied = 0;
  const cache: FakeCache = {
    url: '',
    port: 0,
    mode: 'ok',
    proxied: () => proxied,
  };
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    if (!path.startsWith('http://')) {
      if (cache.gateway && path === '/metrics') {
        res.setHeader('content-type', 'text/plain; version=0.0.4');
        return res.end(
          `# TYPE estuary_gateway_bytes_sent_total counter\nestuary_gateway_bytes_sent_total ${cache.gateway.bytesSent}\n`,
        );
      }
      if (cache.gateway && path === '/estuary/v1/summary')
        return res.end(JSON.stringify(cache.gateway.summary));
      res.statusCode = 404;
      return res.end();
    }
    if (cache.mode === 'broken') return req.socket.destroy();
    if (cache.mode === 'denied') {
      res.statusCode = 403;
      return res.end('<html>ERR_ACCESS_DENIED</html>');
    }
    proxied++;
    const up = request(path, { method: req.method, headers: { ...req.headers } }, (ur) => {
      res.writeHead(ur.statusCode ?? 502, ur.headers);
      ur.pipe(res);
    });
    up.on('error', () => {
      res.statusCode = 502;
      res.end();
    });
    req.pipe(up);
  };
  const server = createServer(handle);
  const p = await listen(server, port);
  Object.assign(cache, { url: `http://127.0.0.1:${p}`, port: p });
  return cache;
}

/** A TCP relay to RabbitMQ: killing it looks to both clients like the broker going away. */
export async function startRelay(
  targetPort: number,
): Promise<{ url: string; kill(): Promise<void>; revive(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let port = 0;
  const make = () =>
    createTcpServer((client) => {
      const upstream = connect(targetPort, '127.0.0.1');
      sockets.add(client).add(upstream);
      client.pipe(upstream).pipe(client);
      const end = () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
      };
      client.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
    });
  let server = make();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
  const kill = async () => {
    for (const s of sockets) s.destroy();
    sockets.clear();
    await new Promise<void>((r) => server.close(() => r()));
  };
  onTeardown(kill);
  const u = new URL(AMQP_URL);
  u.port = String(port);
  return {
    url: u.href,
    kill,
    async revive() {
      server = make();
      server.listen(port, '127.0.0.1');
      await once(server, 'listening');
    },
  };
}

/** A fresh exchange name, deleted after the file's tests. */
export function uniqueExchange(): string {
  const name = `estuary-test-${randomBytes(4).toString('hex')}`;
  onTeardown(async () => {
    const c = await amqpConnect(AMQP_URL);
    const ch = await c.createChannel();
    await ch.deleteExchange(name).catch(() => {});
    await c.close().catch(() => {});
  });
  return name;
}

/** Publishes raw bodies on an exchange, signed when a key is given. */
export async function rawPublisher(exchange: string) {
  const c = await amqpConnect(AMQP_URL);
  onTeardown(() => c.close().catch(() => {}));
  const ch = await c.createConfirmChannel();
  await ch.assertExchange(exchange, SHOAL_EXCHANGE_TYPE, { durable: false });
  return async (
    body: Buffer | string | object,
    opts: { key?: HmacKey; headers?: Record<string, unknown>; routingKey?: string } = {},
  ) => {
    const b = Buffer.isBuffer(body)
      ? body
      : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    const headers = { ...(opts.key ? sign(b, opts.key) : {}), ...opts.headers };
    ch.publish(exchange, opts.routingKey ?? 'info', b, { contentType: 'application/json', headers });
    await ch.waitForConfirms();
  };
}

export const TEST_DISCOVERY_DEFAULTS = {
  listen: { host: '127.0.0.1', port: 0 },
  amqpUrl: AMQP_URL,
  keys: [],
  shoalCompat: true,
  expiryMs: 180_000,
  sweepMs: 15_000,
  verify: false,
  testUrl: 'http://127.0.0.1:9/none',
  verifyTimeoutMs: 2000,
  recheckMs: 600_000,
  retryBaseMs: 30_000,
  maxCaches: 100_000,
  floodBurst: 10,
  floodPerSecond: 1,
  trustProxy: false,
  // The tests run caches on 127.0.0.1; test/discovery/admission.test.ts covers the refusal.
  allowHostAddresses: true,
  reconnectMaxMs: 1000,
} satisfies Partial<DiscoveryOptions>;

export async function startTestDiscovery(
  o: Partial<DiscoveryOptions> & { exchange: string },
): Promise<Discovery & { logLines: () => Record<string, unknown>[] }> {
  const t = testLog();
  const d = await startDiscovery({ ...TEST_DISCOVERY_DEFAULTS, log: t.log, ...o });
  let stopped = false;
  const stop = d.stop.bind(d);
  onTeardown(async () => {
    if (!stopped) await stop(new AbortController().signal);
  });
  await d.consumer.ready;
  return Object.assign(d, {
    logLines: t.lines,
    stop: async (s: AbortSignal) => {
      stopped = true;
      await stop(s);
    },
  });
}

export async function getJson<T = unknown>(url: string): Promise<T> {
  const res = await fetch(url);
  return (await res.json()) as T;
}

export async function eventually<T>(
  fn: () => Promise<T> | T,
  ok: (v: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: T;
  for (;;) {
    last = await fn();
    if (ok(last)) return last;
    if (Date.now() > until)
      throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const NEVER = new AbortController().signal;
