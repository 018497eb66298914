// Vary against a real origin on loopback: several variants per URL, normalised Accept-Encoding and
// Accept-Language, invalidation of every variant at once, and no sharing of a fill across variants.

import { describe, expect, it } from 'vitest';
import { send } from './helpers/client.ts';
import { startTestGateway } from './helpers/gateway.ts';
import { startOrigin } from './helpers/origin.ts';
import type { Route } from './helpers/origin.ts';

/** Answers the value of request header `name` as the body, varying on it. */
function echo(name: string, delayMs = 0): Route {
  return async (req, res) => {
    if (req.method !== 'GET') {
      req.resume();
      res.writeHead(204);
      res.end();
      return;
    }
    if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
    const body = String(req.headers[name] ?? 'none');
    res.writeHead(200, { 'content-length': Buffer.byteLength(body), vary: name, 'cache-control': 'max-age=60' });
    res.end(body);
  };
}

describe('Vary', async () => {
  const origin = await startOrigin();
  const gw = await startTestGateway();
  const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
    send(gw.url, `${origin.url}${path}`, { headers, method });

  it('keeps several variants of one URL', async () => {
    origin.route('/lang', echo('accept-language'));
    for (const lang of ['en', 'fr', 'de']) await get('/lang', { 'accept-language': lang });
    for (const lang of ['de', 'en', 'fr']) {
      const r = await get('/lang', { 'accept-language': lang });
      expect(r.body.toString(), lang).toBe(lang);
      expect(r.headers['cache-status'], lang).toMatch(/^estuary; hit/);
    }
    const none = await get('/lang');
    expect(none.body.toString()).toBe('none');
    expect(origin.count('/lang')).toBe(4);
  });

  it('treats equivalent Accept-Encoding and Accept-Language values as one variant', async () => {
    origin.route('/enc', echo('accept-encoding'));
    await get('/enc', { 'accept-encoding': 'gzip, br' });
    for (const ae of ['br,gzip', 'BR;q=1.0 , x-gzip', 'gzip, br, zstd;q=0']) {
      const r = await get('/enc', { 'accept-encoding': ae });
      expect(r.headers['cache-status'], ae).toMatch(/^estuary; hit/);
      expect(r.body.toString()).toBe('gzip, br');
    }
    expect((await get('/enc', { 'accept-encoding': 'gzip' })).body.toString()).toBe('gzip');
    expect(origin.count('/enc')).toBe(2);
    origin.route('/al', echo('accept-language'));
    await get('/al', { 'accept-language': 'en-GB, en;q=0.8' });
    expect((await get('/al', { 'accept-language': 'EN-gb,en; q=0.8' })).headers['cache-status']).toMatch(/hit/);
  });

  it('invalidates every variant after an unsafe request', async () => {
    origin.route('/inv', echo('accept-language'));
    for (const lang of ['en', 'fr']) await get('/inv', { 'accept-language': lang });
    expect((await get('/inv', { 'accept-language': 'fr' })).headers['cache-status']).toMatch(/hit/);
    await get('/inv', {}, 'POST');
    for (const lang of ['fr', 'en']) {
      expect((await get('/inv', { 'accept-language': lang })).headers['cache-status'], lang).toMatch(/fwd=miss/);
    }
  });

  it('never hands one variant a fill started for another', async () => {
    origin.route('/slow', echo('accept-language', 300));
    const [en, fr] = await Promise.all([
      get('/slow', { 'accept-language': 'en' }),
      (async () => {
        await new Promise((r) => setTimeout(r, 50));
        return get('/slow', { 'accept-language': 'fr' });
      })(),
    ]);
    expect(en.body.toString()).toBe('en');
    expect(fr.body.toString()).toBe('fr');
  });

  it('keeps the other variants through a 304 of the first, and drops them all on a purge by URL', async () => {
    const admin = await startTestGateway({ adminToken: 'a-long-enough-admin-token-for-tests' });
    origin.route('/rv', (req, res) => {
      const lang = String(req.headers['accept-language']);
      const headers = { vary: 'Accept-Language', 'cache-control': 'max-age=1', etag: `"${lang}"` };
      if (req.headers['if-none-match'] === `"${lang}"`) {
        res.writeHead(304, headers);
        res.end();
        return;
      }
      res.writeHead(200, { ...headers, 'content-length': lang.length });
      res.end(lang);
    });
    const at = (lang: string) =>
      send(admin.url, `${origin.url}/rv`, { headers: { 'accept-language': lang } });
    await at('en');
    await at('fr');
    await new Promise((r) => setTimeout(r, 1500));
    expect((await at('en')).headers['cache-status']).toMatch(/fwd-status=304/);
    expect((await at('fr')).headers['cache-status']).toMatch(/fwd-status=304/);
    expect(origin.count('/rv')).toBe(4);
    const purge = await send(admin.url, '/estuary/v1/admin/purge', {
      method: 'POST',
      headers: { authorization: 'Bearer a-long-enough-admin-token-for-tests', 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${origin.url}/rv` }),
    });
    expect(purge.status).toBe(200);
    expect((await at('fr')).headers['cache-status']).toMatch(/fwd=miss/);
  });
});
