// The cold herd's clients stop when the run is interrupted: a proxy that serves a herd slowly (or
// stalls) must not hold `estuary bench` past SIGINT/SIGTERM, which promises to write what it
// measured and leave.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { herd } from '../../bench/gateway/load.ts';
import { onTeardown } from '../helpers/cleanup.ts';

describe('cold herd', () => {
  it('cuts every client at once when the signal aborts', async () => {
    // Headers and half the body, then nothing: a herd that would never end.
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-length': 2048 });
      res.write(Buffer.alloc(1024));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onTeardown(
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );
    const port = (server.address() as AddressInfo).port;
    const peer = { name: 'stalling', port, mode: 'reverse' as const, version: '', stop: async () => undefined };
    const abort = new AbortController();
    setTimeout(() => abort.abort(new Error('SIGTERM')), 300);
    const started = performance.now();
    const h = await herd(peer, '/big', Buffer.alloc(2048), 20, abort.signal);
    expect(h.exact).toBe(0);
    expect(performance.now() - started).toBeLessThan(5000);
  }, 15_000);
});
