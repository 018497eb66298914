// Forward-proxy caching against a real origin on loopback: hits per tier, RFC 9111 freshness,
// what is never stored or shared, validators and revalidation, HEAD, ranges, invalidation.

import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { send } from './helpers/client.ts';
import { startTestGateway } from './helpers/gateway.ts';
import { fixed, startOrigin } from './helpers/origin.ts';

describe('forward proxy cache', async () => {
  const origin = await startOrigin();
  const gw = await startTestGateway();
  const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
    send(gw.url, `${origin.url}${path}`, { headers, method });

  it('answers a miss from upstream, then hits memory without asking again', async () => {
    origin.route('/hot', fixed('hello', { 'cache-control': 'max-age=61' }));
    const a = await get('/hot');
    expect(a.status).toBe(200);
    expect(a.body.toString()).toBe('hello');
    expect(a.headers['cache-status']).toMatch(/fwd=miss; stored/);
    const b = await get('/hot');
    expect(b.body.toString()).toBe('hello');
    expect(b.headers['cache-status']).toMatch(/^estuary; hit; ttl=6[01]; detail=memory$/);
    expect(origin.count('/hot')).toBe(1);
  });

  it('honours max-age exactly, with no floor, and reports Age', async () => {
    origin.route('/short', fixed('v', { 'cache-control': 'max-age=2' }));
    await get('/short');
    expect((await get('/short')).headers['cache-status']).toMatch(/hit/);
    await sleep(3100);
    const later = await get('/short');
    expect(later.headers['cache-status']).toMatch(/fwd=stale; stored/);
    expect(origin.count('/short')).toBe(2);
  });

  it('computes Age from the upstream Age header and resident time', async () => {
    origin.route('/aged', fixed('v', { 'cache-control': 'max-age=100', age: '30' }));
    await get('/aged');
    const hit = await get('/aged');
    expect(Number(hit.headers.age)).toBeGreaterThanOrEqual(30);
    expect(Number(hit.headers.age)).toBeLessThan(33);
    expect(hit.headers['cache-status']).toMatch(/ttl=(70|69|68)/);
  });

  it('never stores no-store, private, or responses to authorised requests', async () => {
    origin.route('/nostore', fixed('x', { 'cache-control': 'no-store, max-age=60' }));
    origin.route('/private', fixed('x', { 'cache-control': 'private, max-age=60' }));
    origin.route('/authz', fixed('secret', { 'cache-control': 'max-age=60' }));
    for (const p of ['/nostore', '/private']) {
      await get(p);
      await get(p);
      expect(origin.count(p)).toBe(2);
    }
    await get('/authz', { authorization: 'Bearer t' });
    const anon = await get('/authz');
    expect(anon.headers['cache-status']).toMatch(/fwd=miss/);
    expect(origin.count('/authz')).toBe(2);
  });

  it('keeps Vary selections apart', async () => {
    origin.route('/vary', (req, res) => {
      const body = `lang=${req.headers['accept-language'] ?? ''}`;
      res.writeHead(200, {
        'cache-control': 'max-age=60',
        vary: 'Accept-Language',
        'content-length': body.length,
      });
      res.end(body);
    });
    expect((await get('/vary', { 'accept-language': 'en' })).body.toString()).toBe('lang=en');
    expect((await get('/vary', { 'accept-language': 'de' })).body.toString()).toBe('lang=de');
    expect((await get('/vary', { 'accept-language': 'de' })).headers['cache-status']).toMatch(/hit/);
  });

  it('answers conditional requests from the cache', async () => {
    origin.route('/etag', fixed('tagged', { 'cache-control': 'max-age=60', etag: '"v1"' }));
    await get('/etag');
    const r = await get('/etag', { 'if-none-match': '"v1"' });
    expect(r.status).toBe(304);
    expect(r.body.length).toBe(0);
    expect(origin.count('/etag')).toBe(1);
  });

  it('revalidates a stale entry with its validator and merges the 304', async () => {
    let n = 0;
    origin.route('/reval', (req, res) => {
      n++;
      if (req.headers['if-none-match'] === '"r1"') {
        res.writeHead(304, { 'cache-control': 'max-age=60', etag: '"r1"', 'x-gen': String(n) });
        res.end();
        return;
      }
      res.writeHead(200, {
        'cache-control': 'max-age=0',
        etag: '"r1"',
        'content-length': 4,
        'x-gen': String(n),
      });
      res.end('body');
    });
    await get('/reval');
    const second = await get('/reval');
    expect(second.status).toBe(200);
    expect(second.body.toString()).toBe('body');
    expect(second.headers['cache-status']).toMatch(/fwd=stale; fwd-status=304/);
    expect(second.headers['x-gen']).toBe('2');
    const third = await get('/reval');
    expect(third.headers['cache-status']).toMatch(/hit/);
    expect(origin.count('/reval')).toBe(2);
  });

  it('revalidates when the client sends max-age=0 (Frontier) and bypasses on no-cache', async () => {
    origin.route(
      '/frontier',
      fixed('f', { 'cache-control': 'max-age=60', 'last-modified': new Date(0).toUTCString() }),
    );
    await get('/frontier');
    const r = await get('/frontier', { 'cache-control': 'max-age=0' });
    expect(r.headers['cache-status']).toMatch(/fwd=stale/);
    const nc = await get('/frontier', { 'cache-control': 'no-cache' });
    expect(nc.headers['cache-status']).toMatch(/fwd=request/);
    const pragma = await get('/frontier', { pragma: 'no-cache' });
    expect(pragma.headers['cache-status']).toMatch(/fwd=request/);
    expect(origin.count('/frontier')).toBe(4);
  });

  it('answers HEAD from a stored GET', async () => {
    origin.route('/head', fixed('0123456789', { 'cache-control': 'max-age=60' }));
    await get('/head');
    const h = await get('/head', {}, 'HEAD');
    expect(h.status).toBe(200);
    expect(h.headers['content-length']).toBe('10');
    expect(h.body.length).toBe(0);
    expect(origin.count('/head')).toBe(1);
  });

  it('serves ranges from the cache, and 416 for unsatisfiable ones', async () => {
    origin.route('/range', fixed('0123456789', { 'cache-control': 'max-age=60' }));
    await get('/range');
    const r = await get('/range', { range: 'bytes=2-5' });
    expect(r.status).toBe(206);
    expect(r.body.toString()).toBe('2345');
    expect(r.headers['content-range']).toBe('bytes 2-5/10');
    const tail = await get('/range', { range: 'bytes=-3' });
    expect(tail.body.toString()).toBe('789');
    expect((await get('/range', { range: 'bytes=20-' })).status).toBe(416);
    expect(origin.count('/range')).toBe(1);
  });

  it('answers a range of an uncached object from the whole-object fill', async () => {
    const big = Buffer.alloc(3 * 2 ** 20, 7);
    big.write('MARK', 2 ** 20);
    origin.route('/bigrange', fixed(big, { 'cache-control': 'max-age=60' }));
    const r = await get('/bigrange', { range: `bytes=${2 ** 20}-${2 ** 20 + 3}` });
    expect(r.status).toBe(206);
    expect(r.body.toString()).toBe('MARK');
    expect(origin.lastHeaders.get('/bigrange')?.range).toBeUndefined();
    const whole = await get('/bigrange');
    expect(whole.body.equals(big)).toBe(true);
    expect(origin.count('/bigrange')).toBe(1);
  });

  it('invalidates a stored URL after a successful unsafe request', async () => {
    origin.route('/doc', (req, res) => {
      if (req.method === 'POST') {
        req.resume();
        req.on('end', () => {
          res.writeHead(204);
          res.end();
        });
        return;
      }
      fixed('doc', { 'cache-control': 'max-age=60' })(req, res);
    });
    await get('/doc');
    expect((await get('/doc')).headers['cache-status']).toMatch(/hit/);
    const post = await send(gw.url, `${origin.url}/doc`, { method: 'POST', body: 'x' });
    expect(post.status).toBe(204);
    expect((await get('/doc')).headers['cache-status']).toMatch(/fwd=miss/);
  });

  it('appends X-Forwarded-For and Via', async () => {
    origin.route('/xff', fixed('x', { 'cache-control': 'no-store' }));
    await get('/xff', { 'x-forwarded-for': '192.0.2.1' });
    const h = origin.lastHeaders.get('/xff')!;
    expect(h['x-forwarded-for']).toBe('192.0.2.1, 127.0.0.1');
    expect(h.via).toMatch(/estuary/);
  });

  it('does not cache an uncacheable status without freshness', async () => {
    origin.route('/err', fixed('oops', {}, 500));
    await get('/err');
    await get('/err');
    expect(origin.count('/err')).toBe(2);
  });

  it('uses heuristic freshness only with Last-Modified on a heuristically cacheable status', async () => {
    const lm = new Date(Date.now() - 10 * 86_400_000).toUTCString();
    origin.route('/heur', fixed('h', { 'last-modified': lm, date: new Date().toUTCString() }));
    await get('/heur');
    expect((await get('/heur')).headers['cache-status']).toMatch(/hit/);
    origin.route('/nolm', fixed('h', {}));
    await get('/nolm');
    await get('/nolm');
    expect(origin.count('/nolm')).toBe(2);
  });
});
