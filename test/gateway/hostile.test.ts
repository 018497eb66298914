// One client must never take the gateway down: a real `estuary gateway` process, a real origin,
// and clients that leave at the worst moment. After each attack the same process must still answer
// a plain request completely.

import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { send } from './helpers/client.ts';
import { type GatewayChild, startGatewayProcess } from './helpers/gateway.ts';
import { fixed, startOrigin, type Route } from './helpers/origin.ts';

/** Answers after `ms`, or never if the client of the origin left. */
function late(ms: number, body: string, headers: Record<string, string> = {}): Route {
  return async (req, res) => {
    req.resume();
    await new Promise((r) => setTimeout(r, ms));
    if (res.destroyed) return;
    res.writeHead(200, { 'content-length': Buffer.byteLength(body), ...headers });
    res.end(body);
  };
}

/** Sends `raw` on a fresh connection and closes it after `afterMs`, reading nothing. */
function sendAndLeave(url: string, raw: string, afterMs: number): Promise<void> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = connect(Number(u.port), u.hostname, () => s.write(raw));
    s.on('error', () => undefined);
    setTimeout(() => {
      s.destroy();
      resolve();
    }, afterMs);
  });
}

/** Sends `raw` and collects everything the gateway answers until it closes or `ms` pass. */
export function exchange(url: string, raw: string, ms = 3000): Promise<string> {
  const u = new URL(url);
  return new Promise((resolve) => {
    let got = '';
    const s = connect(Number(u.port), u.hostname, () => s.write(raw));
    s.on('data', (d) => (got += d.toString('latin1')));
    s.on('error', () => undefined);
    const done = () => {
      clearTimeout(t);
      s.destroy();
      resolve(got);
    };
    const t = setTimeout(done, ms);
    s.on('close', done);
  });
}

async function stillServes(gw: GatewayChild, originUrl: string): Promise<void> {
  const r = await send(gw.url, `${originUrl}/plain`);
  expect(r.status).toBe(200);
  expect(r.body.toString()).toBe('plain');
  expect(r.complete).toBe(true);
  expect(gw.child.output()).not.toMatch(/RequestAbortedError|uncaught|unhandled/i);
}

describe('clients that leave while the gateway waits for the origin', async () => {
  const origin = await startOrigin({ '/plain': fixed('plain', { 'cache-control': 'max-age=60' }) });
  origin.route('/nostore', late(700, 'late', { 'cache-control': 'no-store' }));
  origin.route('/post', late(700, 'posted'));
  origin.route('/auth', late(700, 'secret', { 'cache-control': 'max-age=60' }));
  origin.route('/head', late(700, 'head'));

  for (const workers of [1, 2]) {
    it(`survives aborts before upstream headers on every pass-through (--workers ${workers})`, async () => {
      const gw = await startGatewayProcess(['--allow-dest', '@loopback', '--workers', String(workers)]);
      const o = origin.url;
      const host = `Host: ${new URL(o).host}\r\n`;
      for (let round = 0; round < 3; round++) {
        await Promise.all([
          sendAndLeave(gw.url, `GET ${o}/nostore HTTP/1.1\r\n${host}\r\n`, 150),
          sendAndLeave(gw.url, `POST ${o}/post HTTP/1.1\r\n${host}Content-Length: 2\r\n\r\nhi`, 150),
          sendAndLeave(gw.url, `GET ${o}/auth HTTP/1.1\r\n${host}Authorization: Basic eDp5\r\n\r\n`, 150),
          sendAndLeave(gw.url, `HEAD ${o}/head HTTP/1.1\r\n${host}\r\n`, 150),
        ]);
      }
      // Let every origin answer arrive at a gateway whose clients are gone.
      await new Promise((r) => setTimeout(r, 900));
      await stillServes(gw, o);
      expect(await gw.child.stop('SIGTERM')).toBe(0);
    });
  }
});

describe('--access-log with request bodies', async () => {
  const origin = await startOrigin({ '/plain': fixed('plain', { 'cache-control': 'max-age=60' }) });
  origin.route('/post', (req, res) => {
    let n = 0;
    req.on('data', (c: Buffer) => (n += c.length));
    req.on('end', () => {
      const body = `got ${n}`;
      res.writeHead(201, { 'content-length': body.length });
      res.end(body);
    });
  });

  it('logs a POST and answers a request pipelined after it', async () => {
    const gw = await startGatewayProcess(['--allow-dest', '@loopback', '--access-log', '-']);
    const o = origin.url;
    const host = `Host: ${new URL(o).host}\r\n`;
    const answer = await exchange(
      gw.url,
      `POST ${o}/post HTTP/1.1\r\n${host}Content-Length: 5\r\n\r\nhello` +
        `GET ${o}/plain HTTP/1.1\r\n${host}Connection: close\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 201[^]*got 5HTTP\/1\.1 200[^]*plain$/);
    await stillServes(gw, o);
    expect(gw.child.output()).toMatch(/ TCP_MISS\/201 \d+ POST http:\/\/127\.0\.0\.1:\d+\/post - HIER_DIRECT\//);
    expect(await gw.child.stop('SIGTERM')).toBe(0);
  });
});

describe('forward mode keeps the request path as the client sent it', async () => {
  const origin = await startOrigin();
  const seen: string[] = [];
  for (const p of ['/a/../b', '/a/%2e%2e/b', '/a\\b', '/a/./b?x=/../y']) {
    origin.route(p.split('?')[0]!, (req, res) => {
      seen.push(req.url ?? '');
      res.writeHead(200, { 'content-length': 2, 'cache-control': 'max-age=60' });
      res.end('ok');
    });
  }

  it('forwards dot segments, encoded dots and backslashes unchanged, and keys the cache on them', async () => {
    const gw = await startGatewayProcess(['--allow-dest', '@loopback']);
    const host = `Host: ${new URL(origin.url).host}\r\n`;
    for (const p of ['/a/../b', '/a/%2e%2e/b', '/a\\b', '/a/./b?x=/../y']) {
      const answer = await exchange(gw.url, `GET ${origin.url}${p} HTTP/1.1\r\n${host}Connection: close\r\n\r\n`);
      expect(answer, p).toMatch(/^HTTP\/1\.1 200 [^]*\r\n\r\nok$/);
    }
    expect(seen).toEqual(['/a/../b', '/a/%2e%2e/b', '/a\\b', '/a/./b?x=/../y']);
    // Each is its own cache entry: none of them was answered with another's bytes.
    const again = await exchange(gw.url, `GET ${origin.url}/a/../b HTTP/1.1\r\n${host}Connection: close\r\n\r\n`);
    expect(again).toMatch(/cache-status: estuary; hit/i);
    expect(seen).toHaveLength(4);
    expect(await gw.child.stop('SIGTERM')).toBe(0);
  });
});

describe('requests without Host', async () => {
  it('gets 400 with Proxy-Status for HTTP/1.1 on every path, and HTTP/1.0 is still served', async () => {
    const origin = await startOrigin({ '/plain': fixed('plain', { 'cache-control': 'max-age=60' }) });
    const gw = await startGatewayProcess(['--allow-dest', '@loopback']);
    for (const target of [`${origin.url}/plain`, '/plain', '/metrics']) {
      const answer = await exchange(gw.url, `GET ${target} HTTP/1.1\r\n\r\n`);
      expect(answer, target).toMatch(/^HTTP\/1\.1 400 [^]*proxy-status: estuary; error=http_request_error; details="an HTTP\/1\.1 request needs a Host header"/i);
    }
    expect(await exchange(gw.url, `GET ${origin.url}/plain HTTP/1.0\r\n\r\n`)).toMatch(/^HTTP\/1\.1 200 [^]*plain$/);
    expect(await gw.child.stop('SIGTERM')).toBe(0);
  });
});
