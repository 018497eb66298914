// CVMFS rules against a real origin laid out like a stratum 1, in reverse mode with failover and
// through the forward proxy: content verification, no-cache replacement, no negative caching of
// data/, truncated bodies never stored, collapsed forwarding with streaming waiters.

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { send } from './helpers/client.ts';
import { startTestGateway } from './helpers/gateway.ts';
import { fixed, type Origin, slow, startOrigin, truncated } from './helpers/origin.ts';

const REPO = '/cvmfs/atlas.cern.ch';

function dataPath(body: Buffer, algo: 'sha1' | 'rmd160' | 'shake128' = 'sha1', suffix = ''): string {
  const hex =
    algo === 'shake128'
      ? createHash('shake128', { outputLength: 20 }).update(body).digest('hex')
      : createHash(algo === 'rmd160' ? 'ripemd160' : 'sha1')
          .update(body)
          .digest('hex');
  const alg = algo === 'sha1' ? '' : `-${algo}`;
  return `${REPO}/data/${hex.slice(0, 2)}/${hex.slice(2)}${alg}${suffix}`;
}

const DATA_HEADERS = { 'cache-control': 'max-age=259200', 'content-type': 'application/octet-stream' };

describe('CVMFS in reverse mode', async () => {
  const s1a = await startOrigin();
  const s1b = await startOrigin();
  const gw = await startTestGateway({ upstream: [`cvmfs=${s1a.url},${s1b.url}`], allowDest: [] });
  const get = (path: string, headers: Record<string, string> = {}) => send(gw.url, path, { headers });
  const both = (path: string, route: Parameters<Origin['route']>[1]) => {
    s1a.route(path, route);
    s1b.route(path, route);
  };

  it('stores a verified data object, with every hash algorithm and type suffix', async () => {
    for (const [algo, suffix] of [
      ['sha1', ''],
      ['sha1', 'C'],
      ['rmd160', 'P'],
      ['shake128', ''],
    ] as const) {
      const body = Buffer.from(`object ${algo}${suffix}`);
      const path = dataPath(body, algo, suffix);
      both(path, fixed(body, DATA_HEADERS));
      expect((await get(path)).body.equals(body)).toBe(true);
      const hit = await get(path);
      expect(hit.headers['cache-status']).toMatch(/hit/);
      expect(hit.body.equals(body)).toBe(true);
    }
  });

  it('refuses a data object whose bytes do not match its name: never stored, never served whole', async () => {
    const path = dataPath(Buffer.from('the real content'));
    both(path, fixed('corrupted bytes!', DATA_HEADERS));
    const r = await get(path);
    expect(r.complete).toBe(false);
    const again = await get(path);
    expect(again.complete).toBe(false);
    expect(s1a.count(path) + s1b.count(path)).toBe(2);
    const m = await get('/metrics');
    expect(m.body.toString()).toMatch(/estuary_gateway_verify_failures_total 2/);
  });

  it('fails over to the next stratum 1 on 404 for data and never caches the 404', async () => {
    const body = Buffer.from('replicated late');
    const path = dataPath(body);
    s1b.route(path, fixed(body, DATA_HEADERS));
    const r = await get(path);
    expect(r.status).toBe(200);
    expect(r.body.equals(body)).toBe(true);
    expect(s1a.count(path)).toBe(1);
    const missing = dataPath(Buffer.from('nowhere'));
    expect((await get(missing)).status).toBe(404);
    expect((await get(missing)).status).toBe(404);
    expect(s1b.count(missing)).toBe(2);
  });

  it('bypasses and replaces the stored copy on no-cache', async () => {
    const body = Buffer.from('good bytes');
    const path = dataPath(body);
    both(path, fixed(body, DATA_HEADERS));
    await get(path);
    const r = await get(path, { 'cache-control': 'no-cache', pragma: 'no-cache' });
    expect(r.headers['cache-status']).toMatch(/fwd=request/);
    expect(r.body.equals(body)).toBe(true);
    expect((await get(path)).headers['cache-status']).toMatch(/hit/);
  });

  it('honours the 61 s manifest max-age', async () => {
    const path = `${REPO}/.cvmfspublished`;
    both(path, fixed('Cabc\nN atlas\n--\nsig', { 'cache-control': 'max-age=61' }));
    await get(path);
    const hit = await get(path);
    expect(hit.headers['cache-status']).toMatch(/hit; ttl=6[01]/);
  });

  it('never stores a body cut short by the upstream; waiting clients get an error', async () => {
    const body = Buffer.alloc(2 * 2 ** 20, 1);
    const path = dataPath(body);
    both(path, truncated(body, 2 ** 20, DATA_HEADERS));
    const replies = await Promise.all([get(path), get(path), get(path)]);
    for (const r of replies) {
      expect(r.complete).toBe(false);
      expect(r.body.length).toBeLessThan(body.length);
    }
    both(path, fixed(body, DATA_HEADERS));
    const ok = await get(path);
    expect(ok.complete).toBe(true);
    expect(ok.body.equals(body)).toBe(true);
  });

  it('collapses concurrent misses into one upstream fetch; every waiter streams the exact bytes', async () => {
    const body = Buffer.alloc(4 * 2 ** 20);
    for (let i = 0; i < body.length; i += 4) body.writeUInt32BE(i, i);
    const path = dataPath(body);
    both(path, slow(body, 256 * 1024, 20, DATA_HEADERS));
    const replies = await Promise.all(Array.from({ length: 40 }, () => get(path)));
    expect(s1a.count(path) + s1b.count(path)).toBe(1);
    for (const r of replies) {
      expect(r.complete).toBe(true);
      expect(r.body.equals(body)).toBe(true);
    }
    expect(replies.filter((r) => /collapsed/.test(String(r.headers['cache-status']))).length).toBe(39);
  });

  it('does not let a slow client hold back the fill or the fast clients', async () => {
    const body = Buffer.alloc(8 * 2 ** 20, 3);
    const path = dataPath(body);
    both(path, fixed(body, DATA_HEADERS));
    const slowReply = send(gw.url, path, { slowBytesPerMs: 2000 });
    const started = Date.now();
    const fast = await Promise.all([get(path), get(path)]);
    const fastMs = Date.now() - started;
    for (const r of fast) expect(r.body.equals(body)).toBe(true);
    const s = await slowReply;
    const slowMs = Date.now() - started;
    expect(s.body.equals(body)).toBe(true);
    // The slow reader needs ~4 s for 8 MiB; the fast ones must not have waited for it.
    expect(fastMs).toBeLessThan(slowMs / 2);
    expect(s1a.count(path) + s1b.count(path)).toBe(1);
  });

  it('finishes and stores a fill even when every client left mid-transfer', async () => {
    const body = Buffer.alloc(2 * 2 ** 20, 9);
    const path = dataPath(body);
    both(path, slow(body, 128 * 1024, 20, DATA_HEADERS));
    const { request } = await import('node:http');
    await new Promise<void>((resolve) => {
      const u = new URL(gw.url);
      const req = request({ host: u.hostname, port: u.port, path }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.end();
    });
    for (let i = 0; i < 50 && gw.cache.disk.get(`reverse://cvmfs${path}`) === undefined; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const r = await get(path);
    expect(r.headers['cache-status']).toMatch(/hit/);
    expect(r.body.equals(body)).toBe(true);
    expect(s1a.count(path) + s1b.count(path)).toBe(1);
  });

  it('fails over when the first stratum 1 is down', async () => {
    const body = Buffer.from('failover');
    const path = dataPath(body);
    s1b.route(path, fixed(body, DATA_HEADERS));
    const dead = await startOrigin();
    await dead.close();
    const gw2 = await startTestGateway({ upstream: [`cvmfs=${dead.url},${s1b.url}`], allowDest: [] });
    const r = await send(gw2.url, path);
    expect(r.status).toBe(200);
    expect(r.body.equals(body)).toBe(true);
  });

  it('reports what it holds per repository in the summary', async () => {
    const r = await get('/estuary/v1/summary');
    const summary = JSON.parse(r.body.toString());
    expect(summary.version).toBe(1);
    expect(summary.cvmfs[0].repo).toBe('atlas.cern.ch');
    expect(summary.cvmfs[0].bytes).toBeGreaterThan(8 * 2 ** 20);
    expect(summary.cache.objects).toBeGreaterThan(3);
  });
});
