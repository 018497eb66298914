// A client that trickles request header lines (the classic slowloris) would keep its connection,
// and one of the worker's --max-connections slots, for as long as it likes. --headers-timeout
// (60 s by default, Node's own headersTimeout) bounds the request head; the test sets 3 s.

import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { onTeardown } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { rawOrigin, rawRequest, sleep, startGateway } from './gateway-lib.ts';

describe('slowloris client', () => {
  it('a request head trickled for longer than --headers-timeout is cut; a prompt one is served', { timeout: 60_000 }, async () => {
    const origin = await rawOrigin((s) => s.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok'));
    const gw = await startGateway(['--allow-dest', '@loopback', '--headers-timeout', '3s', '--cache-dir', await tempDir('atk-gw-')]);
    const s = net.connect(gw.port, '127.0.0.1', () => s.write('GET http://127.0.0.1:1/ HTTP/1.1\r\n'));
    s.on('error', () => {});
    let reply = '';
    s.on('data', (d) => (reply += d.toString('latin1')));
    const t = setInterval(() => s.write('X-Slow: 1\r\n'), 500);
    onTeardown(() => {
      clearInterval(t);
      s.destroy();
    });
    let closedAt = 0;
    const start = Date.now();
    s.on('close', () => (closedAt = Date.now() - start));
    const ok = await rawRequest(gw.port, `GET http://127.0.0.1:${origin}/ HTTP/1.1\r\nHost: 127.0.0.1:${origin}\r\nConnection: close\r\n\r\n`);
    expect(ok.status).toBe(200);
    await sleep(12_000);
    expect(closedAt, 'connection still open after 12 s').toBeGreaterThan(0);
    expect(closedAt).toBeGreaterThanOrEqual(2500);
    expect(reply).toMatch(/^HTTP\/1\.1 408/);
  });
});
