// Attack: purging forward-proxy objects by the URL as the client sent it and the access log shows
// it, in spellings a real client or a hostile one produces.
//
// docs/CACHING.md (admin API): forward-proxy objects are purged "by absolute URL, spelt as the
// client sent it or the access log shows it: scheme and host in any case, with or without the
// default port". Each request below is stored under its normalised URL; the purge of the logged
// spelling must name that object.
// (A target with userinfo is refused with 400 and never stored.)
// Expected: every purge answers `purged: 1` and the next request is fetched from the origin.

import http from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { sleep, startGateway } from './gateway-lib.ts';
import { adminPost, pathOrigin } from './gwindex2-lib.ts';
import { TOKEN } from './gwmap4-lib.ts';

afterAll(runTeardowns);

function proxyGet(port: number, url: string, host: string): Promise<{ status: number; cache: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: url, headers: { host }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, cache: String(res.headers['cache-status']) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('forward-proxy purges by the logged URL', () => {
  it('remove the object for percent-encoded, IPv4-shorthand and leading-zero-port spellings', async () => {
    const o = await pathOrigin();
    const dir = await tempDir('gwmap5-fwdpurge-');
    const log = join(dir, 'access.log');
    const gw = await startGateway(['--allow-dest', '@loopback', '--cache-dir', join(dir, 'cache'), '--admin-token', TOKEN, '--access-log', log]);
    const p = o.port;
    const spellings = [
      `http://%6cocalhost:${p}/pct-host`,
      `http://127.1:${p}/shorthand`,
      `http://localhost:0${p}/zero-port`,
      `http://LocalHost:${p}?q=only-query`,
    ];
    const got: Record<string, unknown> = {};
    for (const url of spellings) {
      const first = await proxyGet(gw.port, url, `127.0.0.1:${p}`);
      const second = await proxyGet(gw.port, url, `127.0.0.1:${p}`);
      if (first.status !== 200 || !second.cache.includes('hit')) {
        got[url] = `not cached: ${first.status} ${first.cache} / ${second.cache}`;
        continue;
      }
      await sleep(150);
      const lines = readFileSync(log, 'utf8').trim().split('\n');
      const logged = lines.at(-1)!.split(' ').find((f) => f.startsWith('http://'));
      const answer = await adminPost(gw.port, TOKEN, 'purge', { url: logged });
      const after = await proxyGet(gw.port, url, `127.0.0.1:${p}`);
      got[url] = { logged: logged === url ? 'as sent' : logged, answer, after: after.cache.includes('hit') ? 'served from the cache' : 'fetched' };
    }
    const want = Object.fromEntries(spellings.map((u) => [u, { logged: 'as sent', answer: { purged: 1 }, after: 'fetched' }]));
    expect(got).toEqual(want);
  }, 30_000);
});
