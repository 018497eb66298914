// The front reader (gateway/front-reader.ts) against node:http's path: the same bytes for every
// answer it gives, answers in request order however requests mix on one connection, and the
// connection's limits (header timeout, stop) as without it.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { send } from './helpers/client.ts';
import { startTestGateway } from './helpers/gateway.ts';
import { startOrigin, type Origin } from './helpers/origin.ts';
import { getHead, RawConnection } from './helpers/raw-client.ts';
import { tempDir } from '../helpers/tmp.ts';

const BIG = Buffer.alloc(200 * 1024, 'b');
const SMALL = Buffer.alloc(4096, 's');

function routes(origin: Origin): void {
  const answer = (status: number, headers: Record<string, string>, body: Buffer | string, sendDate = true) =>
    (_req: IncomingMessage, res: ServerResponse) => {
      res.sendDate = sendDate;
      res.writeHead(status, headers);
      res.end(body);
    };
  const fresh = { 'cache-control': 'max-age=3600' };
  origin.route('/plain', answer(200, { ...fresh, etag: '"v1"', 'content-type': 'application/x-cvmfs' }, SMALL));
  origin.route('/nodate', answer(200, fresh, 'x', false));
  origin.route('/gone', answer(404, { 'cache-control': 'max-age=600' }, 'no such object'));
  origin.route('/empty', answer(200, fresh, ''));
  origin.route('/big', answer(200, fresh, BIG));
  origin.route('/disposed', answer(200, { ...fresh, 'content-disposition': 'attachment; filename="a.txt"' }, 'd'));
  origin.route('/vary', (req, res) => {
    res.writeHead(200, { ...fresh, vary: 'Accept-Encoding' });
    res.end(`for ${req.headers['accept-encoding'] ?? 'none'}`);
  });
  origin.route('/slow', (_req, res) => {
    setTimeout(() => {
      res.writeHead(200, { 'cache-control': 'no-store' });
      res.end('slow');
    }, 150);
  });
  origin.route('/short', answer(200, { 'cache-control': 'max-age=1' }, 'short'));
}

/** What differs between two runs of the same answer: its clock. */
function normalized(head: string): string {
  return head
    .replace(/^(date): .*$/gim, '$1: -')
    .replace(/^age: \d+$/gm, 'age: -')
    .replace(/ttl=-?\d+/g, 'ttl=-');
}

const REQUESTS: readonly [string, string, string][] = [
  ['GET', '/plain', ''],
  ['HEAD', '/plain', ''],
  ['GET', '/plain', 'User-Agent: cvmfs Fuse 2.11.2\r\nAccept: */*\r\nConnection: Keep-Alive\r\n'],
  ['GET', '/nodate', ''],
  ['GET', '/gone', ''],
  ['HEAD', '/gone', ''],
  ['GET', '/empty', ''],
  ['GET', '/big', ''],
  ['GET', '/disposed', ''],
  ['GET', '/vary', ''],
  ['GET', '/vary', 'Accept-Encoding: gzip\r\n'],
  ['GET', '/plain', 'Range: bytes=0-9\r\n'],
  ['GET', '/plain', 'If-None-Match: "v1"\r\n'],
  ['GET', '/plain', 'Connection: close\r\n'],
];

async function answersFrom(frontHits: boolean): Promise<{ heads: string[]; bodies: Buffer[]; front: number }> {
  const origin = await startOrigin();
  routes(origin);
  const gw = await startTestGateway({ upstream: [`o=${origin.url}`], frontHits });
  // A fill stores to disk; the first hit there brings a small object into memory.
  for (let i = 0; i < 2; i++) {
    for (const [method, path, extra] of REQUESTS) await send(gw.url, path, { method, headers: headersOf(extra) });
  }
  const heads: string[] = [];
  const bodies: Buffer[] = [];
  for (const [method, path, extra] of REQUESTS) {
    const c = await RawConnection.open(gw.url);
    c.write(getHead(path, 'gw', extra, method));
    const a = await c.read(method === 'HEAD');
    heads.push(normalized(a.head));
    bodies.push(a.body);
  }
  return { heads, bodies, front: gw.metrics.frontHit.value };
}

function headersOf(extra: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of extra.split('\r\n').filter(Boolean)) {
    const i = line.indexOf(':');
    const name = line.slice(0, i).toLowerCase();
    if (name !== 'connection') out[name] = line.slice(i + 1).trim();
  }
  return out;
}

describe('the front reader', () => {
  it('sends the bytes node:http would, for every request it answers and every one it does not', async () => {
    const on = await answersFrom(true);
    const off = await answersFrom(false);
    for (let i = 0; i < REQUESTS.length; i++) {
      expect(on.heads[i], REQUESTS[i]!.join(' ')).toBe(off.heads[i]);
      expect(on.bodies[i]!.equals(off.bodies[i]!), REQUESTS[i]!.join(' ')).toBe(true);
    }
    expect(off.front).toBe(0);
    // Plain GET ×2, HEAD, nodate, gone ×2, empty, big, vary ×2: the rest takes the full path.
    expect(on.front).toBe(10);
  });

  it('answers pipelined requests in order, whoever answers each', async () => {
    const origin = await startOrigin();
    routes(origin);
    const gw = await startTestGateway({ upstream: [`o=${origin.url}`] });
    for (const p of ['/plain', '/gone', '/big', '/plain', '/gone', '/big']) await send(gw.url, p);
    const c = await RawConnection.open(gw.url);
    const order: [string, string, string][] = [
      ['GET', '/plain', ''],
      ['GET', '/slow', ''],
      ['GET', '/gone', ''],
      ['POST', '/slow', 'Content-Length: 5\r\n'],
      ['GET', '/big', ''],
      ['HEAD', '/plain', ''],
    ];
    c.write(order.map(([m, p, x]) => getHead(p, 'gw', x, m) + (m === 'POST' ? 'hello' : '')).join(''));
    const got = [];
    for (const [m] of order) got.push(await c.read(m === 'HEAD'));
    expect(got.map((a) => a.status)).toEqual([200, 200, 404, 200, 200, 200]);
    expect(got.map((a) => a.body.length)).toEqual([SMALL.length, 4, 14, 4, BIG.length, 0]);
    expect(origin.count('/slow')).toBe(2);
  });

  it('answers the requests before a pipelined Connection: close, then closes', async () => {
    const origin = await startOrigin();
    routes(origin);
    const gw = await startTestGateway({ upstream: [`o=${origin.url}`] });
    for (const p of ['/plain', '/plain']) await send(gw.url, p);
    const c = await RawConnection.open(gw.url);
    c.write(getHead('/plain', 'gw') + getHead('/slow', 'gw') + getHead('/plain', 'gw', 'Connection: keep-alive, close\r\n') + getHead('/plain', 'gw'));
    expect((await c.read()).body.equals(SMALL)).toBe(true);
    expect((await c.read()).body.toString()).toBe('slow');
    const last = await c.read();
    expect(last.body.equals(SMALL)).toBe(true);
    expect(last.headers.connection).toBe('close');
    await c.waitClosed();
  });

  it('serves a head that arrives in pieces, and the requests after it', async () => {
    const origin = await startOrigin();
    routes(origin);
    const gw = await startTestGateway({ upstream: [`o=${origin.url}`] });
    await send(gw.url, '/plain');
    const c = await RawConnection.open(gw.url);
    c.write('GET /plain HTTP/1.1\r\nHo');
    await new Promise((r) => setTimeout(r, 50));
    c.write('st: gw\r\n\r\n');
    expect((await c.read()).body.equals(SMALL)).toBe(true);
    c.write(getHead('/plain', 'gw'));
    expect((await c.read()).status).toBe(200);
  });

  it('keeps a connection busy with hits past --headers-timeout, and still times out a slow head', async () => {
    const origin = await startOrigin();
    routes(origin);
    const gw = await startTestGateway({ upstream: [`o=${origin.url}`], headersTimeout: '1s' });
    await send(gw.url, '/plain');
    await send(gw.url, '/plain');
    const c = await RawConnection.open(gw.url);
    // One miss first: node:http is then given the connection, and its header timer with it.
    c.write(getHead('/slow', 'gw'));
    await c.read();
    for (let i = 0; i < 12; i++) {
      c.write(getHead('/plain', 'gw'));
      expect((await c.read()).status).toBe(200);
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(c.closed).toBe(false);
    c.write('GET /plain HTTP/1.1\r\nHost: gw\r\n');
    const late = await c.read(false, 5000);
    expect(late.status).toBe(408);
  });

  for (const frontHits of [true, false]) {
    it(`answers 408 to a connection that sends nothing within --headers-timeout (front hits ${frontHits ? 'on' : 'off'})`, async () => {
      const origin = await startOrigin();
      const gw = await startTestGateway({ upstream: [`o=${origin.url}`], headersTimeout: '1s', frontHits });
      const c = await RawConnection.open(gw.url);
      const started = Date.now();
      expect((await c.read(false, 4000)).status).toBe(408);
      await c.waitClosed(1000);
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    });
  }

  it('does not serve a stale entry: the full path revalidates it', async () => {
    const origin = await startOrigin();
    routes(origin);
    const gw = await startTestGateway({ upstream: [`o=${origin.url}`] });
    await send(gw.url, '/short');
    await new Promise((r) => setTimeout(r, 2100));
    const c = await RawConnection.open(gw.url);
    c.write(getHead('/short', 'gw'));
    expect((await c.read()).body.toString()).toBe('short');
    expect(origin.count('/short')).toBe(2);
    expect(gw.metrics.frontHit.value).toBe(0);
  });

  it('counts and logs what it answers as the full path does', async () => {
    const origin = await startOrigin();
    routes(origin);
    const dir = await tempDir('estuary-front-');
    const log = join(dir, 'access.log');
    const gw = await startTestGateway({ upstream: [`o=${origin.url}`], accessLog: log });
    await send(gw.url, '/plain');
    await send(gw.url, '/plain');
    const c = await RawConnection.open(gw.url);
    c.write(getHead('/plain', 'gw') + getHead('/plain', 'gw', '', 'HEAD'));
    const a = await c.read();
    await c.read(true);
    const text = await gw.metrics.registry.metrics();
    expect(text).toMatch(/estuary_gateway_front_hits_total 2/);
    expect(text).toMatch(/estuary_gateway_cache_hits_total\{tier="memory"\} 2/);
    expect(text).toMatch(/estuary_gateway_requests_total\{method="GET",status_class="2xx"\} 3/);
    expect(text).toMatch(new RegExp(`estuary_gateway_bytes_sent_total ${3 * SMALL.length}`));
    await gw.stop();
    const lines = (await readFile(log, 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(4);
    const fields = lines[2]!.split(/\s+/);
    expect(fields.slice(2)).toEqual(['127.0.0.1', 'TCP_HIT/200', String(a.head.length + SMALL.length), 'GET', '/plain', '-', 'HIER_NONE/-', 'application/x-cvmfs']);
    // node:http's answers name their type too.
    expect(lines[0]).toMatch(/ TCP_MISS\/200 .* application\/x-cvmfs$/);
    expect(lines[1]).toMatch(/ TCP_HIT\/200 .* application\/x-cvmfs$/);
    expect(lines[3]).toMatch(/TCP_HIT\/200 \d+ HEAD \/plain /);
  });

  it('closes an idle connection it holds when the gateway stops', async () => {
    const origin = await startOrigin();
    routes(origin);
    const gw = await startTestGateway({ upstream: [`o=${origin.url}`] });
    await send(gw.url, '/plain');
    const c = await RawConnection.open(gw.url);
    c.write(getHead('/plain', 'gw'));
    await c.read();
    const started = Date.now();
    await gw.stop();
    await c.waitClosed(2000);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
