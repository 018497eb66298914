// A client that trickles request header lines (one every 5 s, the classic slowloris) keeps its
// connection, and one of the worker's --max-connections slots, for as long as it likes: the
// request head has no deadline. Node's own http server closes such a connection after 60 s
// (headersTimeout); the gateway's connections are still open after 120 s. This file needs about
// 75 s: the bound it asserts is Node's default, 60 s.

import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { onTeardown } from '../helpers/cleanup.ts';
import { tempDir } from '../helpers/tmp.ts';
import { sleep, startGateway } from './gateway-lib.ts';

describe('slowloris client', () => {
  it('a request head trickled for more than 60 s is cut', { timeout: 100_000 }, async () => {
    const gw = await startGateway(['--allow-dest', '@loopback', '--cache-dir', await tempDir('atk-gw-')]);
    const s = net.connect(gw.port, '127.0.0.1', () => s.write('GET http://127.0.0.1:1/ HTTP/1.1\r\n'));
    s.on('error', () => {});
    const t = setInterval(() => s.write('X-Slow: 1\r\n'), 5000);
    onTeardown(() => {
      clearInterval(t);
      s.destroy();
    });
    let closedAt = 0;
    const start = Date.now();
    s.on('close', () => (closedAt = Date.now() - start));
    await sleep(75_000);
    expect(closedAt, 'connection still open after 75 s').toBeGreaterThan(0);
  });
});
