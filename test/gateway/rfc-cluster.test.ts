// Vary variants, invalidation and stale-while-revalidate with two worker processes sharing one
// disk cache, and variants found again after a restart: variant keys hang off the first entry's
// file, which every worker and every restart sees under the same name.

import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/tmp.ts';
import { send } from './helpers/client.ts';
import { startGatewayProcess } from './helpers/gateway.ts';
import { startOrigin } from './helpers/origin.ts';

describe('RFC 9111 details across workers and restarts', async () => {
  const origin = await startOrigin();
  let version = 1;
  origin.route('/lang', (req, res) => {
    if (req.method !== 'GET') {
      req.resume();
      version++;
      res.writeHead(204);
      res.end();
      return;
    }
    const body = `${req.headers['accept-language']}-v${version}`;
    res.writeHead(200, { 'content-length': body.length, vary: 'Accept-Language', 'cache-control': 'max-age=60' });
    res.end(body);
  });
  const cacheDir = await tempDir('estuary-gw-');
  const args = ['--allow-dest', '127.0.0.1', '--cache-dir', cacheDir];
  const gw = await startGatewayProcess(['--workers', '2', ...args]);
  const get = (url: string, lang: string, method = 'GET') =>
    send(url, `${origin.url}/lang`, { headers: { 'accept-language': lang }, method });

  it('keeps variants apart in both workers and invalidates them all at once', async () => {
    for (const lang of ['en', 'fr']) await get(gw.url, lang);
    for (let i = 0; i < 6; i++) {
      const lang = i % 2 ? 'en' : 'fr';
      const r = await get(gw.url, lang);
      expect(r.body.toString()).toBe(`${lang}-v1`);
    }
    expect(origin.count('/lang')).toBe(2);
    await get(gw.url, 'en', 'POST');
    await sleep(100); // the invalidation travels to the other worker
    for (let i = 0; i < 4; i++) {
      const lang = i % 2 ? 'en' : 'fr';
      expect((await get(gw.url, lang)).body.toString()).toBe(`${lang}-v2`);
    }
  });

  it('finds every variant again after a restart', async () => {
    const before = origin.count('/lang');
    await gw.child.stop();
    const again = await startGatewayProcess(args);
    for (const lang of ['fr', 'en']) {
      const r = await get(again.url, lang);
      expect(r.body.toString()).toBe(`${lang}-v2`);
      expect(r.headers['cache-status']).toMatch(/^estuary; hit/);
    }
    expect(origin.count('/lang')).toBe(before);
  });
});
