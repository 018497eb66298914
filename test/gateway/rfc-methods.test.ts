// Methods through the gateway against real origins on loopback: extension methods are forwarded,
// safe ones invalidate nothing, unsafe ones invalidate their target and same-origin
// Location/Content-Location in forward and reverse mode alike.

import { describe, expect, it } from 'vitest';
import type { Route } from './helpers/origin.ts';
import { send } from './helpers/client.ts';
import { startTestGateway } from './helpers/gateway.ts';
import { fixed, startOrigin } from './helpers/origin.ts';

/** GET answers a cacheable body; any other method answers `status` with the given headers. */
function doc(status: number, headers: Record<string, string> = {}): Route {
  return (req, res) => {
    if (req.method === 'GET' || req.method === 'HEAD') {
      fixed('doc', { 'cache-control': 'max-age=60' })(req, res);
      return;
    }
    req.resume();
    req.on('end', () => {
      res.writeHead(status, { 'x-method': req.method ?? '', 'content-length': 0, ...headers });
      res.end();
    });
  };
}

describe('methods', async () => {
  const origin = await startOrigin();
  const gw = await startTestGateway();
  const fwd = (path: string, method = 'GET') => send(gw.url, `${origin.url}${path}`, { method });

  it('forwards extension methods such as M-SEARCH and PROPFIND', async () => {
    origin.route('/ext', doc(200));
    for (const method of ['M-SEARCH', 'PROPFIND']) {
      const r = await fwd('/ext', method);
      expect(r.status, method).toBe(200);
      expect(r.headers['x-method']).toBe(method);
    }
    expect((await fwd('/ext', 'TRACE')).status).toBe(501);
  });

  it('invalidates after an unknown method, but not after OPTIONS', async () => {
    origin.route('/inv', doc(200));
    await fwd('/inv');
    await fwd('/inv', 'OPTIONS');
    expect((await fwd('/inv')).headers['cache-status']).toMatch(/hit/);
    await fwd('/inv', 'M-SEARCH');
    expect((await fwd('/inv')).headers['cache-status']).toMatch(/fwd=miss/);
  });

  it('invalidates the target, Location and Content-Location in reverse mode', async () => {
    const rorigin = await startOrigin();
    const rgw = await startTestGateway({ upstream: [`site=${rorigin.url}`], allowDest: [] });
    const get = (path: string, method = 'GET') => send(rgw.url, path, { method });
    rorigin.route('/a', doc(201, { location: '/b', 'content-location': `${rorigin.url}/c` }));
    rorigin.route('/b', doc(200));
    rorigin.route('/c', doc(200));
    rorigin.route('/d', doc(200, { location: 'http://elsewhere.invalid/d' }));
    for (const p of ['/a', '/b', '/c', '/d']) {
      await get(p);
      expect((await get(p)).headers['cache-status'], p).toMatch(/hit/);
    }
    expect((await get('/a', 'POST')).status).toBe(201);
    for (const p of ['/a', '/b', '/c']) {
      expect((await get(p)).headers['cache-status'], p).toMatch(/fwd=miss/);
    }
    expect((await get('/d')).headers['cache-status']).toMatch(/hit/);
  });
});
