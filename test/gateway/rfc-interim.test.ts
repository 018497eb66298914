// Interim (1xx) responses through the gateway, against a real origin on loopback: 103 Early Hints
// and 102 Processing reach the client before the final response, on a fill and on a
// pass-through, and are never stored.

import { request } from 'node:http';
import { type AddressInfo, connect, createServer } from 'node:net';
import { onTeardown } from '../helpers/cleanup.ts';
import { describe, expect, it } from 'vitest';
import { startTestGateway } from './helpers/gateway.ts';
import { startOrigin } from './helpers/origin.ts';
import type { Route } from './helpers/origin.ts';

interface Seen {
  readonly interim: { status: number; link?: string | string[] }[];
  readonly status: number;
  readonly body: string;
}

/** A proxy request that records every 1xx the client receives (fetch() would hide them). */
function get(gateway: string, url: string, method = 'GET'): Promise<Seen> {
  const gw = new URL(gateway);
  return new Promise((resolve, reject) => {
    const interim: Seen['interim'] = [];
    const req = request({ host: gw.hostname, port: gw.port, path: url, method, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ interim, status: res.statusCode ?? 0, body }));
    });
    req.on('information', (info) => interim.push({ status: info.statusCode, link: info.headers.link }));
    req.on('error', reject);
    req.end(method === 'POST' ? 'x' : undefined);
  });
}

const LINK = '</style.css>; rel=preload; as=style';

function hinted(cacheControl: string): Route {
  return async (req, res) => {
    req.resume();
    res.writeProcessing();
    res.writeEarlyHints({ link: LINK });
    await new Promise((r) => setTimeout(r, 100));
    res.writeHead(200, { 'content-length': 4, 'cache-control': cacheControl });
    res.end('body');
  };
}

describe('interim responses', async () => {
  const origin = await startOrigin({ '/hints': hinted('max-age=60'), '/pass': hinted('no-store') });
  const gw = await startTestGateway();

  it('forwards 102 and 103 on a fill, then never again from the cache', async () => {
    const first = await get(gw.url, `${origin.url}/hints`);
    expect(first.interim).toEqual([{ status: 102 }, { status: 103, link: LINK }]);
    expect(first.status).toBe(200);
    expect(first.body).toBe('body');
    const hit = await get(gw.url, `${origin.url}/hints`);
    expect(hit.interim).toEqual([]);
    expect(hit.body).toBe('body');
    expect(origin.count('/hints')).toBe(1);
  });

  it('forwards them on a pass-through, for safe and unsafe methods', async () => {
    for (const method of ['GET', 'POST']) {
      const r = await get(gw.url, `${origin.url}/pass`, method);
      expect(r.interim, method).toEqual([{ status: 102 }, { status: 103, link: LINK }]);
      expect(r.body).toBe('body');
    }
  });

  it('sends none to an HTTP/1.0 client (RFC 9110 §15.2)', async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const sock = connect(Number(new URL(gw.url).port), '127.0.0.1');
      let text = '';
      sock.on('data', (c) => (text += c.toString('latin1')));
      sock.on('end', () => resolve(text));
      sock.on('error', reject);
      sock.write(`GET ${origin.url}/pass HTTP/1.0\r\n\r\n`);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 200 /);
    expect(raw).not.toMatch(/ 10[23] /);
  });

  it('measured: an origin that sends 100 Continue unasked is refused by undici (502)', async () => {
    origin.route('/cont', (req, res) => {
      res.writeContinue();
      res.writeHead(200, { 'content-length': 2, 'cache-control': 'no-store' });
      res.end('ok');
    });
    const r = await get(gw.url, `${origin.url}/cont`);
    expect(r.status).toBe(502);
    expect(r.interim).toEqual([]);
  });

  it('drops interim responses node:http cannot write: a 104, a 103 without Link', async () => {
    // A raw origin: node:http's own server cannot send these.
    const raw = createServer((sock) => {
      sock.once('data', () => {
        sock.write('HTTP/1.1 104 Upload Resumption Supported\r\nupload-draft-interop-version: 3\r\n\r\n');
        sock.write('HTTP/1.1 103 Early Hints\r\nx-hint: a\r\n\r\n');
        sock.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncache-control: no-store\r\nconnection: close\r\n\r\nok');
      });
    });
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    onTeardown(() => new Promise<void>((resolve) => raw.close(() => resolve())));
    const port = (raw.address() as AddressInfo).port;
    const r = await get(gw.url, `http://127.0.0.1:${port}/raw`);
    expect(r.status).toBe(200);
    expect(r.body).toBe('ok');
    expect(r.interim).toEqual([]);
  });
});
