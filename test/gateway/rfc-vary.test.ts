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
});
