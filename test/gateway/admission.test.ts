// Never an open proxy, and bad input of every kind: refusals and errors are answered with a clear
// status and Proxy-Status, the process stays up, and nothing cached is lost.

import type { ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { send } from './helpers/client.ts';
import { startTestGateway } from './helpers/gateway.ts';
import { fixed, startOrigin } from './helpers/origin.ts';

function raw(gatewayUrl: string, text: string): Promise<string> {
  const u = new URL(gatewayUrl);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(u.port), u.hostname);
    let out = '';
    sock.on('data', (d) => {
      out += d.toString('latin1');
    });
    sock.on('end', () => resolve(out));
    sock.on('close', () => resolve(out));
    sock.on('error', reject);
    sock.write(text);
  });
}

describe('admission and bad input', async () => {
  const origin = await startOrigin({ '/ok': fixed('ok', { 'cache-control': 'max-age=60' }) });
  const gw = await startTestGateway({ allowDest: ['@loopback', '.invalid'] });

  it('refuses destinations that are not listed, with Proxy-Status', async () => {
    const r = await send(gw.url, 'http://example.com/');
    expect(r.status).toBe(403);
    expect(r.headers['proxy-status']).toMatch(
      /^estuary; error=destination_ip_prohibited; details=".*allow-list/,
    );
  });

  it('denies everything by default until destinations are listed', async () => {
    const closed = await startTestGateway({ allowDest: [] });
    expect((await send(closed.url, `${origin.url}/ok`)).status).toBe(403);
  });

  it('refuses clients outside the allowed networks', async () => {
    const strict = await startTestGateway({ allowClient: ['10.0.0.0/8'] });
    const r = await send(strict.url, `${origin.url}/ok`);
    expect(r.status).toBe(403);
    expect(r.headers['proxy-status']).toMatch(/error=http_request_denied/);
  });

  it('answers unsupported methods, bodies on GET and malformed targets with 4xx/501', async () => {
    expect((await send(gw.url, `${origin.url}/ok`, { method: 'TRACE' })).status).toBe(501);
    const body = await send(gw.url, `${origin.url}/ok`, { body: 'x', headers: { 'content-length': '1' } });
    expect(body.status).toBe(400);
    expect((await send(gw.url, 'http://[oops/')).status).toBe(400);
    expect((await send(gw.url, 'ftp://127.0.0.1/x')).status).toBe(400);
    expect(await raw(gw.url, 'FOO / HTTP/1.1\r\nHost: x\r\n\r\n')).toMatch(
      /^HTTP\/1\.1 400 .*\r\nProxy-Status: estuary; error=http_request_error/s,
    );
    expect(await raw(gw.url, 'garbage\r\n\r\n')).toMatch(/^HTTP\/1\.1 400/);
  });

  it('answers oversized headers with 431', async () => {
    const r = await raw(
      gw.url,
      `GET ${origin.url}/ok HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(r).toMatch(/^HTTP\/1\.1 431/);
  });

  it('speaks HTTP/1.0 with absolute URIs', async () => {
    const r = await raw(gw.url, `GET ${origin.url}/ok HTTP/1.0\r\n\r\n`);
    expect(r).toMatch(/^HTTP\/1\.1 200/);
    expect(r.endsWith('ok')).toBe(true);
  });

  it('reports DNS failures, refused connections and hung upstreams as proxy errors', async () => {
    const dns = await send(gw.url, 'http://nonexistent.invalid/x');
    expect(dns.status).toBe(502);
    expect(dns.headers['proxy-status']).toMatch(/error=dns_error/);
    const dead = await startOrigin();
    await dead.close();
    const refused = await send(gw.url, `${dead.url}/x`);
    expect(refused.status).toBe(502);
    expect(refused.headers['proxy-status']).toMatch(/error=connection_refused/);
    const quick = await startTestGateway({ responseTimeout: '300ms' });
    origin.route('/hang', () => undefined);
    const hung = await send(quick.url, `${origin.url}/hang`);
    expect(hung.status).toBe(504);
    expect(hung.headers['proxy-status']).toMatch(/error=http_response_timeout/);
    // Still up, cache intact.
    expect((await send(gw.url, `${origin.url}/ok`)).status).toBe(200);
  });

  it('serves stale when every upstream fails, within the bound, unless must-revalidate', async () => {
    const o = await startOrigin({
      '/stale': fixed('old', { 'cache-control': 'max-age=1' }),
      '/strict': fixed('old', { 'cache-control': 'max-age=1, must-revalidate' }),
    });
    await send(gw.url, `${o.url}/stale`);
    await send(gw.url, `${o.url}/strict`);
    await o.close();
    await sleep(2100);
    const r = await send(gw.url, `${o.url}/stale`);
    expect(r.status).toBe(200);
    expect(r.body.toString()).toBe('old');
    expect(r.headers['cache-status']).toMatch(/detail=stale-on-error/);
    expect((await send(gw.url, `${o.url}/strict`)).status).toBe(502);
    const bounded = await startTestGateway({ staleIfError: '0s' });
    const o2 = await startOrigin({ '/s': fixed('old', { 'cache-control': 'max-age=1' }) });
    await send(bounded.url, `${o2.url}/s`);
    await o2.close();
    await sleep(2100);
    expect((await send(bounded.url, `${o2.url}/s`)).status).toBe(502);
  });

  it('never serves stale a copy its upstream answered 404 for, and keeps one it answered 403 for', async () => {
    let phase: 'stored' | 'answered' = 'stored';
    const then = (status: number) => (_req: unknown, res: ServerResponse) => {
      if (phase === 'stored') res.writeHead(200, { 'cache-control': 'max-age=1', etag: '"v1"' }).end('old');
      else res.writeHead(status, { 'cache-control': 'no-store' }).end('no');
    };
    const o = await startOrigin({ '/gone': then(404), '/denied': then(403) });
    await send(gw.url, `${o.url}/gone`);
    await send(gw.url, `${o.url}/denied`);
    phase = 'answered';
    await sleep(2100);
    expect((await send(gw.url, `${o.url}/gone`)).status).toBe(404);
    expect((await send(gw.url, `${o.url}/denied`)).status).toBe(403);
    await o.close();
    const gone = await send(gw.url, `${o.url}/gone`);
    expect(`${gone.status} ${gone.body.toString()}`).not.toBe('200 old');
    expect(gone.status).toBe(502);
    const denied = await send(gw.url, `${o.url}/denied`);
    expect(`${denied.status} ${denied.body.toString()}`).toBe('200 old');
  });

  it('tunnels CONNECT to allowed destinations and ports only', async () => {
    const tunnelGw = await startTestGateway({ connectPorts: [String(origin.port)] });
    const ok = await raw(
      tunnelGw.url,
      `CONNECT 127.0.0.1:${origin.port} HTTP/1.1\r\nHost: x\r\n\r\nGET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
    expect(ok).toMatch(/^HTTP\/1\.1 200 Connection Established\r\n\r\nHTTP\/1\.1 200 OK/);
    const denied = await raw(gw.url, `CONNECT 127.0.0.1:${origin.port} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(denied).toMatch(/^HTTP\/1\.1 403 .*Proxy-Status: estuary; error=destination_ip_prohibited/s);
  });
});
