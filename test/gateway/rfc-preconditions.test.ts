// A client's If-Match, If-Unmodified-Since and If-Range on an HTTP object the gateway holds
// (RFC 9110 §13.2.2): a stored copy that fails the precondition is checked with the origin first,
// then the precondition is evaluated against the version the origin confirms or sends.

import { describe, expect, it } from 'vitest';
import { send } from './helpers/client.ts';
import { startTestGateway } from './helpers/gateway.ts';
import { startOrigin } from './helpers/origin.ts';

const LM = 'Tue, 24 Nov 2026 10:00:00 GMT';

describe('preconditions on stored HTTP objects', async () => {
  const origin = await startOrigin();
  const gw = await startTestGateway();
  let version = 'v1';
  origin.route('/obj', (req, res) => {
    const etag = `"${version}"`;
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, { etag, 'cache-control': 'max-age=600', 'last-modified': LM });
      res.end();
      return;
    }
    const body = `${version}-0123456789`;
    res.writeHead(200, { etag, 'cache-control': 'max-age=600', 'last-modified': LM, 'content-length': body.length });
    res.end(body);
  });
  const get = (headers: Record<string, string> = {}, method = 'GET') => send(gw.url, `${origin.url}/obj`, { headers, method });

  it('answers 412 to If-Match naming another version, after the origin confirmed the stored one', async () => {
    expect((await get()).status).toBe(200);
    expect((await get()).headers['cache-status']).toMatch(/hit/);
    const same = await get({ 'if-match': '"v1"', range: 'bytes=0-1' });
    expect({ status: same.status, body: same.body.toString(), cs: same.headers['cache-status'] }).toEqual({ status: 206, body: 'v1', cs: expect.stringMatching(/hit/) });
    const before = origin.count('/obj');
    const other = await get({ 'if-match': '"v0"', range: 'bytes=0-1' });
    expect(other.status).toBe(412);
    expect(origin.lastHeaders.get('/obj')?.['if-none-match']).toBe('"v1"');
    expect(origin.count('/obj')).toBe(before + 1);
    expect((await get({ 'if-match': '"v0"' }, 'HEAD')).status).toBe(412);
    expect((await get({ 'if-unmodified-since': 'Tue, 24 Nov 2026 09:00:00 GMT' })).status).toBe(412);
    expect((await get({ 'if-unmodified-since': LM })).status).toBe(200);
  });

  it('serves the origin\'s newer version to If-Match naming it, never the stored one', async () => {
    version = 'v2';
    const r = await get({ 'if-match': '"v2"', range: 'bytes=0-1' });
    expect({ status: r.status, body: r.body.toString() }).toEqual({ status: 206, body: 'v2' });
    // The stored copy is now v2: If-Match on v1 fails.
    expect((await get({ 'if-match': '"v1"', range: 'bytes=0-1' })).status).toBe(412);
  });

  it('answers a range with If-Range naming another version with the whole body', async () => {
    const same = await get({ range: 'bytes=0-1', 'if-range': '"v2"' });
    expect({ status: same.status, body: same.body.toString() }).toEqual({ status: 206, body: 'v2' });
    const other = await get({ range: 'bytes=0-1', 'if-range': '"v1"' });
    expect({ status: other.status, body: other.body.toString() }).toEqual({ status: 200, body: 'v2-0123456789' });
  });
});
