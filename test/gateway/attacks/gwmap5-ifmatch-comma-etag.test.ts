// Attack: If-Match on a cached forward-proxy object whose ETag holds a comma.
//
// RFC 9110 §8.8.3: an entity-tag is DQUOTE *etagc DQUOTE, and etagc includes ","; origins that
// build ETags from several parts use it (`"v1,gz"`). A client echoing the ETag in If-Match must
// get the object. The gateway splits If-Match at every comma, quotes or not, so the ETag never
// matches itself and the cached object answers 412 — where the origin (which was asked
// nothing) would answer 200.
// Expected: docs/CACHING.md: `If-Match` is "evaluated (RFC 9110 §13.2.2 ...) against the response
// the answer would come from": the stored ETag matches, 200 with the body; also inside a list.

import http from 'node:http';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { startGateway } from './gateway-lib.ts';
import { pathOrigin } from './gwindex2-lib.ts';

afterAll(runTeardowns);

function proxyGet(port: number, url: string, headers: Record<string, string> = {}): Promise<{ status: number; cache: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: url, headers: { host: new URL(url).host, ...headers }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, cache: String(res.headers['cache-status']) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('If-Match with an ETag that holds a comma', () => {
  it('matches the stored ETag, alone and in a list', async () => {
    const o = await pathOrigin({ etag: '"v1,gz"' });
    const dir = await tempDir('gwmap5-comma-');
    const gw = await startGateway(['--allow-dest', '@loopback', '--cache-dir', join(dir, 'cache')]);
    const url = `http://127.0.0.1:${o.port}/c/obj`;
    expect((await proxyGet(gw.port, url)).status).toBe(200);
    expect((await proxyGet(gw.port, url)).cache).toMatch(/hit/);
    const alone = await proxyGet(gw.port, url, { 'if-match': '"v1,gz"' });
    const listed = await proxyGet(gw.port, url, { 'if-match': '"other", "v1,gz"' });
    const wrong = await proxyGet(gw.port, url, { 'if-match': '"v1"' });
    expect({ alone: alone.status, listed: listed.status, wrong: wrong.status }).toEqual({ alone: 200, listed: 200, wrong: 412 });
  }, 20_000);
});
