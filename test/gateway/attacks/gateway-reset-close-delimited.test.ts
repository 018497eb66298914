// A close-delimited body (HTTP/1.0, or HTTP/1.1 with neither Content-Length nor chunked) ends
// when the connection closes. A connection *reset* (RST: an origin or middlebox aborting) is not
// that end: RFC 9112 §8 — a message whose connection fails is incomplete. The upstream client
// (undici) deliberately treats ECONNRESET on such a response as its complete end, so the gateway
// stores the truncated body and serves it as whole, from disk, for the object's whole max-age.
// The connector marks resets (gateway/upstream-reset.ts) so such an end fails the body.

import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp.ts';
import { pattern, rawOrigin, rawRequest, sleep, startGateway } from './gateway-lib.ts';

describe('close-delimited body ended by a connection reset', () => {
  it.each([
    ['HTTP/1.0', 'HTTP/1.0 200 OK\r\nCache-Control: max-age=600\r\n\r\n'],
    ['HTTP/1.1 Connection: close', 'HTTP/1.1 200 OK\r\nCache-Control: max-age=600\r\nConnection: close\r\n\r\n'],
  ])('%s: the truncated body is neither stored nor given a clean end', async (_name, head) => {
    const part = pattern(100_000, 1);
    const origin = await rawOrigin((s) => {
      s.write(head);
      s.write(part);
      // the origin (or a firewall between) aborts the transfer: RST, not FIN
      setTimeout(() => s.resetAndDestroy(), 300);
    });
    const gw = await startGateway(['--allow-dest', '@loopback', '--cache-dir', await tempDir('atk-gw-')]);
    const req = `GET http://127.0.0.1:${origin}/obj HTTP/1.1\r\nHost: 127.0.0.1:${origin}\r\nConnection: close\r\n\r\n`;
    const first = await rawRequest(gw.port, req);
    await sleep(300);
    const second = await rawRequest(gw.port, req);
    expect(second.head, 'the reset transfer was stored and is served as a hit').not.toMatch(/cache-status: estuary; hit/i);
    // the first client must not be handed the 100,000 bytes as a complete response either
    const cl = /content-length: (\d+)/i.exec(first.head)?.[1];
    const cleanEnd = first.status === 200 && cl !== undefined && Number(cl) === first.body.length;
    expect(cleanEnd, first.head).toBe(false);
  });

  it('an orderly close (FIN) still ends a close-delimited body, which is stored', async () => {
    const whole = pattern(100_000, 2);
    const origin = await rawOrigin((s) => {
      s.write('HTTP/1.0 200 OK\r\nCache-Control: max-age=600\r\n\r\n');
      s.end(whole);
    });
    const gw = await startGateway(['--allow-dest', '@loopback', '--cache-dir', await tempDir('atk-gw-')]);
    const req = `GET http://127.0.0.1:${origin}/obj HTTP/1.0\r\nHost: 127.0.0.1:${origin}\r\nConnection: close\r\n\r\n`;
    const first = await rawRequest(gw.port, req);
    expect(first.body.equals(whole), first.head).toBe(true);
    await sleep(300);
    const second = await rawRequest(gw.port, req);
    expect(second.head).toMatch(/cache-status: estuary; hit/i);
    expect(second.body.equals(whole)).toBe(true);
  });
});
