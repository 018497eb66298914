// Which requests reach the gateway's own pages, and what the status page shows of names a client
// or an origin controls. docs/CACHING.md: "In reverse mode `/` is the upstream's, and is
// forwarded; only `/metrics`, `/healthz` and paths under `/estuary/` are the gateway's own";
// lib/page.ts: the page "fits 1024 px, and escapes everything it shows".

import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp.ts';
import { rawOrigin, rawRequest, startGateway } from './gateway-lib.ts';

const PAGE = '/estuary/v1/status';

function req(port: number, method: string, target: string, extra = '') {
  return rawRequest(port, `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${extra}Connection: close\r\n\r\n`);
}

/** An origin that names the path it was asked for, so a forwarded request shows. */
function echoOrigin() {
  return rawOrigin((s, head) => {
    const path = head.split(' ')[1] ?? '';
    const body = `upstream:${path}`;
    s.end(`HTTP/1.1 200 OK\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: max-age=600\r\nConnection: close\r\n\r\n${body}`);
  });
}

describe('status page: paths in reverse mode', () => {
  it('/ and upstream paths that merely start like the gateway\'s own are forwarded', async () => {
    const origin = await echoOrigin();
    const gw = await startGateway(['--upstream', `default=http://127.0.0.1:${origin}`, '--cache-dir', await tempDir('atk-status-')]);
    // Holds today: / is the upstream's.
    const root = await req(gw.port, 'GET', '/');
    expect(root.body.toString()).toBe('upstream:/');
    // /healthz itself is the gateway's, as documented.
    expect((await req(gw.port, 'GET', '/healthz')).body.toString()).toMatch(/"status":"ok"/);
    // But only /healthz is: a site's /healthzone/… (or /healthz-report.html) is the upstream's.
    // Today every path that starts with the letters "/healthz" is taken by the gateway and answered
    // with Fastify's JSON 404 {"message":"Route GET:/healthzone/index.html not found"}.
    const shadowed = await req(gw.port, 'GET', '/healthzone/index.html');
    expect(shadowed.body.toString()).toBe('upstream:/healthzone/index.html');
    const report = await req(gw.port, 'GET', '/healthz-report.html');
    expect(report.body.toString()).toBe('upstream:/healthz-report.html');
  }, 40_000);
});

describe('status page: methods and query strings in forward mode', () => {
  it('a method the page does not serve gets 405 with Allow, not a JSON "Route not found" 404', async () => {
    const gw = await startGateway(['--allow-dest', '@cvmfs', '--cache-dir', await tempDir('atk-status-')]);
    // HEAD works today (Fastify adds it); the rest should say which methods the resource has
    // (RFC 9110 §15.5.6: 405 carries Allow). Today: 404 {"message":"Route POST:/estuary/v1/status not found"}.
    expect((await req(gw.port, 'HEAD', PAGE)).status).toBe(200);
    for (const [method, path] of [
      ['POST', PAGE],
      ['PUT', '/'],
      ['DELETE', '/metrics'],
    ] as const) {
      const r = await req(gw.port, method, path, 'Content-Length: 0\r\n');
      expect(r.status, `${method} ${path}: ${r.head}`).toBe(405);
      expect(r.head).toMatch(/^allow:.*GET/im);
    }
  }, 40_000);

  it('/metrics with a query string (a scrape config with params) is still the metrics', async () => {
    const gw = await startGateway(['--allow-dest', '@cvmfs', '--cache-dir', await tempDir('atk-status-')]);
    // /estuary/v1/status?x and /healthz?x are served; /metrics?x is today refused as
    // "400 not a proxy request: send an absolute URI" in forward mode (and sent upstream in reverse).
    expect((await req(gw.port, 'GET', `${PAGE}?refresh=1`)).status).toBe(200);
    const r = await req(gw.port, 'GET', '/metrics?module=estuary');
    expect(r.status, r.head).toBe(200);
    // Nothing was proxied yet, so the labelled request counter has no sample: its TYPE line and the
    // always-present hit counters show that this is the metrics text.
    expect(r.body.toString()).toMatch(/^# TYPE estuary_gateway_requests_total counter$/m);
    expect(r.body.toString()).toMatch(/^estuary_gateway_cache_hits_total\{tier="memory"\} 0$/m);
  }, 40_000);

  it('a client outside --allow-client gets no page, no metrics and no summary', async () => {
    // Holds today: refused at accept time, before any request is read.
    const gw = await startGateway(['--allow-dest', '@cvmfs', '--allow-client', '10.0.0.0/8', '--cache-dir', await tempDir('atk-status-')]);
    for (const path of [PAGE, '/', '/metrics', '/estuary/v1/summary', '/healthz']) {
      const r = await req(gw.port, 'GET', path);
      expect(r.status, path).toBe(403);
      expect(r.body.toString()).not.toMatch(/estuary gateway|estuary_gateway|prefixes/);
    }
  }, 40_000);
});

describe('status page: names from clients and origins', () => {
  it('object URLs with markup are escaped, and a long one wraps instead of widening the page', async () => {
    const origin = await rawOrigin((s) => s.end('HTTP/1.1 200 OK\r\nContent-Length: 5\r\nCache-Control: max-age=600\r\nConnection: close\r\n\r\nhello'));
    const gw = await startGateway(['--allow-dest', '@loopback', '--cache-dir', await tempDir('atk-status-')]);
    const evil = `/"><script>alert(1)</script><img/src=x/onerror=alert(2)>?'x`;
    const long = `/${'a'.repeat(3000)}`;
    for (const path of [evil, long]) {
      const r = await rawRequest(gw.port, `GET http://127.0.0.1:${origin}${path} HTTP/1.1\r\nHost: 127.0.0.1:${origin}\r\nConnection: close\r\n\r\n`);
      expect(r.status, r.head).toBe(200);
    }
    const page = (await req(gw.port, 'GET', PAGE)).body.toString();
    // Holds today: everything a client wrote is escaped.
    expect(page).not.toMatch(/<script>|<img\//);
    expect(page).toContain('&lt;script&gt;');
    // A 3000-character URL has no break opportunity: the page marks it with class "wrap", but
    // its style sheet only has `td.wrap{overflow-wrap:anywhere}` while the class sits on a
    // <span> inside the cell, so nothing wraps and the table runs 3000 characters wide.
    const style = /<style>([\s\S]*?)<\/style>/.exec(page)?.[1] ?? '';
    const tags = new Set([...page.matchAll(/<([a-z]+)[^>]*class="wrap"/g)].map((m) => m[1]!));
    expect(tags.size).toBeGreaterThan(0);
    for (const tag of tags) {
      const rule = new RegExp(`(^|[}\\s,])(${tag})?\\.wrap\\s*[{,][^}]*overflow-wrap`);
      expect(style, `no overflow-wrap rule applies to <${tag} class="wrap">`).toMatch(rule);
    }
  }, 40_000);
});
