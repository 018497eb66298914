// Attack: a forward-proxy URL purge of an object stored in several Vary variants (an origin
// answering `Vary: Accept-Encoding, Origin`, as nginx with gzip and CORS does), spelt with the
// host in upper case and its default port, with --workers 2.
//
// docs/CACHING.md (admin API): forward-proxy objects are purged "by absolute URL, spelt as the
// client sent it or the access log shows it"; a purge removes the object, whatever variants of it
// were stored.
// Expected: after the purge, every client flavour's next request is fetched from the origin
// (none is a hit), whichever worker answers.

import http from 'node:http';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { startGateway } from './gateway-lib.ts';
import { adminPost, pathOrigin } from './gwindex2-lib.ts';
import { TOKEN } from './gwmap4-lib.ts';

afterAll(runTeardowns);

function proxyGet(port: number, url: string, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: url, headers: { host: new URL(url).host, ...headers }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(String(res.headers['cache-status'])));
    });
    req.on('error', reject);
    req.end();
  });
}

const FLAVOURS: Record<string, Record<string, string>> = {
  curl: {},
  gzip: { 'accept-encoding': 'gzip' },
  browser: { 'accept-encoding': 'gzip, br', origin: 'https://portal.example' },
  other: { 'accept-encoding': 'identity', origin: 'https://other.example' },
};

describe('a forward-proxy URL purge of a Vary\'d object, --workers 2', () => {
  it('removes every variant in every worker', async () => {
    const o = await pathOrigin({ vary: 'Accept-Encoding, Origin' });
    const dir = await tempDir('gwmap5-fwdvary-');
    const gw = await startGateway(['--allow-dest', '@loopback', '--cache-dir', join(dir, 'cache'), '--admin-token', TOKEN, '--workers', '2']);
    const url = `http://localhost:${o.port}/v/obj`;
    for (let round = 0; round < 4; round++) for (const h of Object.values(FLAVOURS)) await proxyGet(gw.port, url, h);
    const hitsBefore = await Promise.all(Object.values(FLAVOURS).map((h) => proxyGet(gw.port, url, h)));
    expect(hitsBefore.filter((s) => s.includes('hit')).length).toBeGreaterThan(0);
    const answer = (await adminPost(gw.port, TOKEN, 'purge', { url: `HTTP://LOCALHOST:${o.port}/v/obj` })) as { purged: number };
    const after: Record<string, string[]> = {};
    for (const [name, h] of Object.entries(FLAVOURS)) {
      // The first request of each flavour after the purge (on a new connection: either worker).
      after[name] = [await proxyGet(gw.port, url, h)].map((s) => (s.includes('hit') ? `HIT ${s}` : 'fetched'));
    }
    expect({ purgedSome: answer.purged >= 1, after }).toEqual({
      purgedSome: true,
      after: Object.fromEntries(Object.keys(FLAVOURS).map((k) => [k, ['fetched']])),
    });
  }, 30_000);
});
