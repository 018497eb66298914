// A plain HTTP relay in front of a real store that records every request the gateway sends it
// (method, path, Range), so tests can count upstream fetches at the origin rather than trust the
// gateway's own metrics. A hook may run before a request is forwarded (e.g. to replace the object
// between two block fetches), and chosen request bodies can be corrupted. Loopback only.

import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTeardown } from './cleanup.ts';

export interface Seen {
  readonly method: string;
  readonly path: string;
  readonly range?: string;
  /** x-amz-copy-source as sent, for tests that check where a copy reads from. */
  readonly copySource?: string;
  /** Response body bytes relayed so far: what crossed the link for this request. */
  bytes?: number;
}

export interface CountingProxy {
  readonly url: string;
  readonly seen: Seen[];
  /** Runs before each request is forwarded; the request waits for it. */
  before?: (r: Seen) => Promise<void> | void;
  /** Requests whose body gets its first byte flipped on the way (a link that corrupts data). */
  alter?: (r: Seen) => boolean;
  /** Requests seen for a path (query ignored) with a method. */
  count(method: string, path: string): Seen[];
}

export async function startCountingProxy(origin: string): Promise<CountingProxy> {
  const to = new URL(origin);
  const agent = new Agent({ keepAlive: true });
  const proxy: CountingProxy = {
    url: '',
    seen: [],
    count: (method, path) => proxy.seen.filter((s) => s.method === method && s.path.split('?')[0] === path),
  };
  const server = createServer((req, res) => {
    const copy = req.headers['x-amz-copy-source'];
    const seen: Seen = { method: req.method ?? '', path: req.url ?? '/', range: req.headers.range, ...(typeof copy === 'string' ? { copySource: copy } : {}) };
    proxy.seen.push(seen);
    Promise.resolve(proxy.before?.(seen)).then(
      () => {
        const up = request(
          { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers, agent },
          (ur) => {
            res.writeHead(ur.statusCode ?? 502, ur.headers);
            seen.bytes = 0;
            ur.on('data', (c: Buffer) => (seen.bytes! += c.length));
            ur.pipe(res);
            res.on('close', () => ur.destroy());
          },
        );
        up.on('error', () => res.destroy());
        if (!proxy.alter?.(seen)) return void req.pipe(up);
        let first = true;
        req.on('data', (c: Buffer) => {
          if (first && c.length > 0) {
            c = Buffer.from(c);
            c[0]! ^= 0xff;
            first = false;
          }
          up.write(c);
        });
        req.on('end', () => up.end());
      },
      () => res.destroy(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  (proxy as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  onTeardown(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    agent.destroy();
  });
  return proxy;
}
