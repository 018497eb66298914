// Cache-Control directives with arguments and their targeted variants, against a real origin on
// loopback: field-qualified no-cache/private, request no-cache, CDN-Cache-Control and the site's
// own targeted field, stale-while-revalidate.

import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { send } from './helpers/client.ts';
import { startGatewayProcess, startTestGateway } from './helpers/gateway.ts';
import { fixed, startOrigin } from './helpers/origin.ts';

describe('directives with field names, and request no-cache', async () => {
  const origin = await startOrigin();
  const gw = await startTestGateway();
  const get = (path: string, headers: Record<string, string> = {}) =>
    send(gw.url, `${origin.url}${path}`, { headers });

  it('stores a response with no-cache="field" or private="field", without those fields', async () => {
    origin.route(
      '/nc-field',
      fixed('v', { 'cache-control': 'max-age=60, no-cache="X-Secret"', 'x-secret': 's', 'x-other': 'o' }),
    );
    origin.route(
      '/priv-field',
      fixed('v', { 'cache-control': 'max-age=60, private="set-cookie"', 'set-cookie': 'id=1', 'x-other': 'o' }),
    );
    for (const [path, field] of [
      ['/nc-field', 'x-secret'],
      ['/priv-field', 'set-cookie'],
    ] as const) {
      const first = await get(path);
      expect(first.headers['cache-status'], path).toMatch(/fwd=miss; stored/);
      const hit = await get(path);
      expect(hit.headers['cache-status'], path).toMatch(/^estuary; hit/);
      expect(hit.headers[field], path).toBeUndefined();
      expect(first.headers[field], path).toBeUndefined();
      expect(hit.headers['x-other'], path).toBe('o');
      expect(origin.count(path), path).toBe(1);
    }
  });

  it('revalidates with the stored validator when the request says no-cache', async () => {
    origin.route('/rnc', (req, res) => {
      if (req.headers['if-none-match'] === '"v1"') {
        res.writeHead(304, { etag: '"v1"', 'cache-control': 'max-age=60' });
        res.end();
        return;
      }
      fixed('body', { etag: '"v1"', 'cache-control': 'max-age=60' })(req, res);
    });
    await get('/rnc');
    const r = await get('/rnc', { 'cache-control': 'no-cache' });
    expect(r.status).toBe(200);
    expect(r.body.toString()).toBe('body');
    expect(origin.lastHeaders.get('/rnc')?.['if-none-match']).toBe('"v1"');
    expect(r.headers['cache-status']).toMatch(/fwd-status=304/);
    expect(origin.count('/rnc')).toBe(2);
  });
});

describe('targeted cache-control fields (RFC 9213)', async () => {
  const origin = await startOrigin();
  const gw = await startTestGateway();
  const own = await startTestGateway({ targetedCacheControl: ['site-cache-control'] });
  const twice = async (url: string, path: string) => {
    await send(url, `${origin.url}${path}`);
    return (await send(url, `${origin.url}${path}`)).headers['cache-status'];
  };

  it('lets CDN-Cache-Control and Estuary-Cache-Control override Cache-Control and Expires', async () => {
    const expired = new Date(Date.now() - 60_000).toUTCString();
    origin.route('/cdn', fixed('v', { 'cache-control': 'no-store', 'cdn-cache-control': 'max-age=60' }));
    origin.route('/cdn-exp', fixed('v', { expires: expired, 'cdn-cache-control': 'max-age=60' }));
    origin.route('/cdn-ns', fixed('v', { 'cache-control': 'max-age=60', 'cdn-cache-control': 'no-store' }));
    origin.route(
      '/est',
      fixed('v', { 'cache-control': 'no-store', 'cdn-cache-control': 'no-store', 'estuary-cache-control': 'max-age=60' }),
    );
    origin.route('/cdn-bad', fixed('v', { 'cache-control': 'no-store', 'cdn-cache-control': 'Max-Age=60' }));
    expect(await twice(gw.url, '/cdn')).toMatch(/^estuary; hit; ttl=(60|59)/);
    expect(await twice(gw.url, '/cdn-exp')).toMatch(/^estuary; hit/);
    expect(await twice(gw.url, '/cdn-ns')).toMatch(/detail=no-store/);
    expect(await twice(gw.url, '/est')).toMatch(/^estuary; hit/);
    // Not a valid Structured Field dictionary (upper-case key): ignored, Cache-Control rules.
    expect(await twice(gw.url, '/cdn-bad')).toMatch(/detail=no-store/);
    // Valid syntax, but max-age must be an integer: the field is ignored whole (RFC 9213 §2.1).
    origin.route('/cdn-type', fixed('v', { 'cache-control': 'no-store', 'cdn-cache-control': 'max-age="60"' }));
    expect(await twice(gw.url, '/cdn-type')).toMatch(/detail=no-store/);
    // The response still carries the targeted fields for caches further down.
    const r = await send(gw.url, `${origin.url}/cdn`);
    expect(r.headers['cdn-cache-control']).toBe('max-age=60');
  });

  it('uses only the fields configured with --targeted-cache-control', async () => {
    origin.route('/site', fixed('v', { 'cache-control': 'no-store', 'site-cache-control': 'max-age=60' }));
    origin.route('/site-cdn', fixed('v', { 'cache-control': 'no-store', 'cdn-cache-control': 'max-age=60' }));
    expect(await twice(own.url, '/site')).toMatch(/^estuary; hit/);
    expect(await twice(own.url, '/site-cdn')).toMatch(/detail=no-store/);
  });
});

describe('stale-while-revalidate (RFC 5861)', async () => {
  const origin = await startOrigin();
  const gw = await startTestGateway();
  const get = (path: string, headers: Record<string, string> = {}) =>
    send(gw.url, `${origin.url}${path}`, { headers });

  it('answers stale at once and revalidates once in the background', async () => {
    let version = 1;
    origin.route('/swr', async (req, res) => {
      const body = `v${version}`;
      if (version > 1) await sleep(600);
      fixed(body, { 'cache-control': 'max-age=1, stale-while-revalidate=30' })(req, res);
    });
    expect((await get('/swr')).body.toString()).toBe('v1');
    await sleep(1500);
    version = 2;
    const started = performance.now();
    // A request directive that asks nothing of freshness does not cancel stale-while-revalidate.
    const [a, b] = await Promise.all([get('/swr'), get('/swr', { 'cache-control': 'x-unknown' })]);
    expect(performance.now() - started).toBeLessThan(400);
    for (const r of [a, b]) {
      expect(r.body.toString()).toBe('v1');
      expect(r.headers['cache-status']).toMatch(/^estuary; hit; ttl=-?\d+; detail=stale-while-revalidate$/);
    }
    await sleep(900);
    const fresh = await get('/swr');
    expect(fresh.body.toString()).toBe('v2');
    expect(fresh.headers['cache-status']).toMatch(/^estuary; hit/);
    expect(origin.count('/swr')).toBe(2);
  });

  it('drops a background answer that may not be stored, and keeps running', async () => {
    // A separate process: a crash must show as a dead gateway, not as noise in the test runner.
    const proc = await startGatewayProcess(['--allow-dest', '127.0.0.1']);
    let storable = true;
    origin.route('/swr-ns', (req, res) => {
      if (storable) return fixed('first', { 'cache-control': 'max-age=1, stale-while-revalidate=30' })(req, res);
      return fixed('second, not storable')(req, res);
    });
    const at = (path: string) => send(proc.url, `${origin.url}${path}`);
    await at('/swr-ns');
    await sleep(1500);
    storable = false;
    expect((await at('/swr-ns')).headers['cache-status']).toMatch(/stale-while-revalidate/);
    await sleep(300);
    expect(origin.count('/swr-ns')).toBe(2);
    expect((await at('/swr-ns')).status).toBe(200);
    expect(proc.child.proc.exitCode).toBeNull();
  });

  it('does not apply past the window, nor with must-revalidate', async () => {
    origin.route('/swr-mr', fixed('x', { 'cache-control': 'max-age=1, stale-while-revalidate=30, must-revalidate' }));
    origin.route('/swr-short', fixed('x', { 'cache-control': 'max-age=1, stale-while-revalidate=1' }));
    await Promise.all([get('/swr-mr'), get('/swr-short')]);
    await sleep(2100);
    for (const p of ['/swr-mr', '/swr-short']) {
      expect((await get(p)).headers['cache-status'], p).toMatch(/fwd=stale/);
    }
  });
});

describe('request no-cache and upstream errors', async () => {
  const origin = await startOrigin();
  const gw = await startTestGateway();

  it("passes the upstream's own 5xx to a no-cache request instead of the stale copy", async () => {
    let broken = false;
    origin.route('/flaky', (req, res) => {
      if (broken) {
        res.writeHead(500, { 'content-length': 4 });
        res.end('oops');
        return;
      }
      fixed('good', { 'cache-control': 'max-age=60', etag: '"g"' })(req, res);
    });
    await send(gw.url, `${origin.url}/flaky`);
    broken = true;
    const r = await send(gw.url, `${origin.url}/flaky`, { headers: { 'cache-control': 'no-cache' } });
    expect(r.status).toBe(500);
    expect(r.body.toString()).toBe('oops');
    expect((await send(gw.url, `${origin.url}/flaky`)).body.toString()).toBe('good');
  });
});
