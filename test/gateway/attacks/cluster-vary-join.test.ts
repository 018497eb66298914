// Check: two variants of one URL asked on two workers at once, while the first fetch is in flight.
// docs/CACHING.md ("What is stored"): "Concurrent requests for different variants never share
// one fetch: a request that joined a fetch for another variant asks upstream on its own."
// Expected: each worker's client gets the body of its own variant; a write on one worker drops
// every variant on the other (docs/CACHING.md: "all its other variants go with it at once").

import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startOrigin } from '../helpers/origin.ts';
import { clusterGateway, connsOnWorkers, workerPids } from './cluster-lib.ts';

afterAll(runTeardowns);

describe('attack: Vary variants fetched on two workers at once', () => {
  it('a request for another variant joining a fetch on another worker gets its own variant', async () => {
    const origin = await startOrigin();
    let version = 0;
    origin.route('/v', (req: IncomingMessage, res: ServerResponse) => {
      if (req.method === 'PUT') {
        req.resume();
        version++;
        res.writeHead(204);
        res.end();
        return;
      }
      const body = `v${version} for ${req.headers['accept-language'] ?? 'none'}`;
      res.writeHead(200, { 'cache-control': 'max-age=600', vary: 'Accept-Language', 'content-length': body.length });
      res.write(body.slice(0, 2));
      setTimeout(() => res.end(body.slice(2)), 800);
    });
    const gw = await clusterGateway(origin.url, 2);
    const [p1, p2] = workerPids(gw.child.pid) as [number, number];
    const conns = await connsOnWorkers(gw.port, [p1, p2]);
    const first = conns.get(p1)!.request('GET', '/v', { 'accept-language': 'de' });
    await new Promise((r) => setTimeout(r, 200));
    const second = await conns.get(p2)!.request('GET', '/v', { 'accept-language': 'fr' });
    expect((await first).body.toString()).toBe('v0 for de');
    expect(second.body.toString()).toBe('v0 for fr');
    // And once both are stored, each worker answers each variant from the cache.
    for (const c of conns.values()) {
      expect((await c.request('GET', '/v', { 'accept-language': 'fr' })).body.toString()).toBe('v0 for fr');
      expect((await c.request('GET', '/v', { 'accept-language': 'de' })).body.toString()).toBe('v0 for de');
    }
    // A write on one worker drops every variant on the other too (once the word has got there).
    await conns.get(p1)!.request('PUT', '/v', {}, 'x');
    await new Promise((r) => setTimeout(r, 300));
    expect((await conns.get(p2)!.request('GET', '/v', { 'accept-language': 'fr' })).body.toString()).toBe('v1 for fr');
    expect((await conns.get(p2)!.request('GET', '/v', { 'accept-language': 'de' })).body.toString()).toBe('v1 for de');
  }, 30_000);
});
