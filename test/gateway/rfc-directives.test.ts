// Cache-Control directives with arguments and their targeted variants, against a real origin on
// loopback: field-qualified no-cache/private, request no-cache, CDN-Cache-Control and the site's
// own targeted field, stale-while-revalidate.

import { describe, expect, it } from 'vitest';
import { send } from './helpers/client.ts';
import { startTestGateway } from './helpers/gateway.ts';
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
