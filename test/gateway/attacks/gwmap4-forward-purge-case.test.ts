// Attack: purging a forward-proxy object by the URL the access log shows for it.
//
// A client asked the forward proxy for `http://LOCALHOST:PORT/a` (host names are case-insensitive,
// RFC 3986 §3.2.2). The object is stored under its normalised URL (`http://localhost:PORT/a`,
// cache/key.ts), but the access log records the URL as the client sent it, and a purge looks up
// exactly the string it is given: `{"url": "http://LOCALHOST:PORT/a"}` answers `{"purged":0}` and
// the object stays served from the cache.
// Expected: docs/CACHING.md (admin API): "forward-proxy objects [are purged] by absolute URL"; the
// same absolute URL in another spelling of its scheme or host (or with its default port) names the
// same object, so the purge removes it (`purged: 1`) and the next request goes to the origin.

import http from 'node:http';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { sleep, startGateway } from './gateway-lib.ts';
import { adminPost, pathOrigin } from './gwindex2-lib.ts';
import { TOKEN } from './gwmap4-lib.ts';

afterAll(runTeardowns);

function proxyGet(port: number, url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: url, headers: { host: new URL(url).host }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(String(res.headers['cache-status'])));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('a forward-proxy purge by the URL the client sent', () => {
  it('removes the object stored under its normalised URL', async () => {
    const o = await pathOrigin();
    const dir = await tempDir('gwmap4-fwdpurge-');
    const log = join(dir, 'access.log');
    const gw = await startGateway(['--allow-dest', '@loopback', '--cache-dir', join(dir, 'cache'), '--admin-token', TOKEN, '--access-log', log]);
    const url = `http://LOCALHOST:${o.port}/a`;
    expect(await proxyGet(gw.port, url)).toMatch(/fwd=miss; stored/);
    expect(await proxyGet(gw.port, url)).toMatch(/hit/);
    await sleep(200);
    // The URL as the operator finds it in the access log.
    const logged = readFileSync(log, 'utf8').split('\n')[0]!.split(' ').filter((f) => f.startsWith('http://'))[0];
    expect(logged).toBe(url);
    const answer = await adminPost(gw.port, TOKEN, 'purge', { url: logged });
    const after = await proxyGet(gw.port, url);
    expect({ answer, after: after.includes('hit') ? 'served from the cache' : 'fetched' }).toEqual({ answer: { purged: 1 }, after: 'fetched' });
  }, 30_000);
});
