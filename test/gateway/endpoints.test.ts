// The gateway's own endpoints on origin-form paths: metrics, health, summary, and the admin API.

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE, startChild } from '../helpers/process.ts';
import { tempDir } from '../helpers/tmp.ts';
import { GATEWAY_METRICS } from '../../lib/metric-names.ts';
import { send } from './helpers/client.ts';
import { startGatewayProcess, startTestGateway } from './helpers/gateway.ts';
import { fixed, startOrigin } from './helpers/origin.ts';

describe('own endpoints', async () => {
  const origin = await startOrigin({ '/a/1': fixed('one', { 'cache-control': 'max-age=60' }) });
  const gw = await startTestGateway({ adminToken: 'sekrit-admin-token-1' });
  const admin = (path: string, token?: string, body?: unknown) =>
    send(gw.url, `/estuary/v1/admin${path}`, {
      method: body ? 'POST' : 'GET',
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });

  it('exports every documented metric', async () => {
    await send(gw.url, `${origin.url}/a/1`);
    await send(gw.url, `${origin.url}/a/1`);
    const text = (await send(gw.url, '/metrics')).body.toString();
    for (const name of Object.values(GATEWAY_METRICS)) expect(text).toContain(name);
    expect(text).toMatch(/estuary_gateway_cache_hits_total\{tier="memory"\} 1/);
    expect(text).toMatch(/estuary_gateway_bytes_sent_total 6/);
    expect(text).toMatch(/estuary_gateway_requests_total\{method="GET",status_class="2xx"\} 2/);
  });

  it('answers /healthz', async () => {
    const r = await send(gw.url, '/healthz');
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body.toString())).toEqual({ status: 'ok' });
  });

  it('guards the admin API with the bearer token', async () => {
    expect((await admin('/stats')).status).toBe(401);
    expect((await admin('/stats', 'wrong')).status).toBe(401);
    const off = await startTestGateway();
    expect((await send(off.url, '/estuary/v1/admin/stats')).status).toBe(403);
    const s = JSON.parse((await admin('/stats', 'sekrit-admin-token-1')).body.toString());
    expect(s.disk.objects).toBe(1);
  });

  it('purges by URL and by prefix', async () => {
    origin.route('/a/2', fixed('two', { 'cache-control': 'max-age=60' }));
    await send(gw.url, `${origin.url}/a/2`);
    const one = JSON.parse((await admin('/purge', 'sekrit-admin-token-1', { url: `${origin.url}/a/1` })).body.toString());
    expect(one.purged).toBe(1);
    expect((await send(gw.url, `${origin.url}/a/1`)).headers['cache-status']).toMatch(/fwd=miss/);
    const all = JSON.parse((await admin('/purge', 'sekrit-admin-token-1', { prefix: `${origin.url}/a/` })).body.toString());
    expect(all.purged).toBe(2);
    expect((await admin('/purge', 'sekrit-admin-token-1', { nothing: 1 })).status).toBe(400);
  });

  it('prefetches HTTP URLs into the cache through the admin API', async () => {
    origin.route('/pf/1', fixed('prefetched', { 'cache-control': 'max-age=60' }));
    const r = await send(gw.url, '/estuary/v1/admin/prefetch', {
      method: 'POST',
      headers: { authorization: 'Bearer sekrit-admin-token-1', 'content-type': 'application/json' },
      body: JSON.stringify({ urls: [`${origin.url}/pf/1`, 'http://not-allowed.example/x'] }),
    });
    const body = JSON.parse(r.body.toString());
    expect(body).toMatchObject({ stored: 1, failed: 1 });
    expect(body.results.find((x: { url: string }) => x.url.includes('not-allowed')).detail).toMatch(/--allow-dest/);
    const hit = await send(gw.url, `${origin.url}/pf/1`);
    expect(hit.headers['cache-status']).toMatch(/hit/);
    expect(origin.count('/pf/1')).toBe(1);
    await send(gw.url, '/estuary/v1/admin/purge', {
      method: 'POST',
      headers: { authorization: 'Bearer sekrit-admin-token-1', 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${origin.url}/pf/1` }),
    });
  });

  it('summarises HTTP prefixes', async () => {
    await send(gw.url, `${origin.url}/a/1`);
    const s = JSON.parse((await send(gw.url, '/estuary/v1/summary')).body.toString());
    expect(s.prefixes).toEqual([{ prefix: `127.0.0.1:${origin.port}/a`, bytes: 3 }]);
  });

  it("writes one line per request with --access-log FILE, in Squid's access.log format, not in the log", async () => {
    const file = join(await tempDir('estuary-access-'), 'access.log');
    const logged = await startGatewayProcess(['--allow-dest', '127.0.0.1', '--access-log', file]);
    await send(logged.url, `${origin.url}/a/1`);
    await send(logged.url, `${origin.url}/a/1`);
    await send(logged.url, 'http://192.0.2.1/denied');
    expect(await logged.child.stop('SIGTERM')).toBe(0);
    const lines = (await readFile(file, 'utf8')).trimEnd().split('\n');
    const host = new URL(origin.url).host;
    const field = (l: string) => l.split(/ +/);
    expect(lines.map((l) => field(l).slice(2, 10))).toEqual([
      ['127.0.0.1', 'TCP_MISS/200', field(lines[0]!)[4], 'GET', `${origin.url}/a/1`, '-', `HIER_DIRECT/${host}`, '-'],
      ['127.0.0.1', 'TCP_HIT/200', field(lines[1]!)[4], 'GET', `${origin.url}/a/1`, '-', 'HIER_NONE/-', '-'],
      // The gateway's own refusal names its type, as every answer that carries one does.
      ['127.0.0.1', 'TCP_DENIED/403', field(lines[2]!)[4], 'GET', 'http://192.0.2.1/denied', '-', 'HIER_NONE/-', 'text/plain'],
    ]);
    for (const l of lines) {
      expect(l).toMatch(/^\d{10}\.\d{3} +\d+ /);
      expect(Number(field(l)[4])).toBeGreaterThan(50);
    }
    expect(logged.child.output()).not.toContain('"msg":"access"');
  });

  it('refuses an --access-log it cannot append to, with exit 2', async () => {
    const gw = startChild(NODE, ['bin/estuary.js', 'gateway', '--listen', '127.0.0.1:0', '--access-log', '/proc/nope/access.log'], {
      cwd: new URL('../../', import.meta.url).pathname,
    });
    expect(await gw.exited).toBe(2);
    expect(gw.output()).toBe(
      'estuary: cannot append to access log /proc/nope/access.log (ENOENT); give a writable file, or - for stdout, with --access-log\n',
    );
  });
});

describe('who may reach the own endpoints', async () => {
  it('refuses a client outside --allow-client on every path, when it connects', async () => {
    const strict = await startTestGateway({ allowClient: ['10.0.0.0/8'], adminToken: 'strict-admin-token-1' });
    for (const path of ['/metrics', '/healthz', '/estuary/v1/summary', '/estuary/v1/admin/stats']) {
      const r = await send(strict.url, path, { headers: { authorization: 'Bearer strict-admin-token-1' } });
      expect(r.status, path).toBe(403);
      expect(String(r.headers['proxy-status']), path).toMatch(/error=http_request_denied/);
      expect(r.body.toString(), path).toMatch(/--allow-client/);
    }
  });

  it('refuses an admin token shorter than 16 characters at start-up', async () => {
    await expect(startTestGateway({ adminToken: 'short' })).rejects.toThrow(/at least 16 characters/);
  });

  it('locks out an address after 5 wrong tokens a minute, and logs each', async () => {
    const gw = await startGatewayProcess(['--admin-token', 'locked-admin-token-1']);
    const stats = (token: string) =>
      send(gw.url, '/estuary/v1/admin/stats', { headers: { authorization: `Bearer ${token}` } });
    for (let i = 0; i < 5; i++) expect((await stats(`guess-${i}`)).status).toBe(401);
    const locked = await stats('locked-admin-token-1');
    expect(locked.status).toBe(429);
    expect(locked.body.toString()).toMatch(/ESTUARY_GW_ADMIN_LOCKED/);
    // Log lines reach the pipe a little after the answers: wait for all five.
    await gw.child.waitFor(/(wrong or missing token[^]*){5}/, 10_000);
    expect(gw.child.output().match(/wrong or missing token/g)).toHaveLength(5);
    expect(gw.child.output()).toMatch(/"client":"127\.0\.0\.1"/);
  });
});
