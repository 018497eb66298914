// A real HTTP hop in front of an S3 server that answers 503 SlowDown on demand, as AWS, Ceph and
// Swift do under load: for the client's retry tests and for mounts that must ride it out.

import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTeardown } from '../../helpers/cleanup.ts';

const SLOW_DOWN =
  '<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>';

export interface ThrottleBudget {
  /** The next this-many requests are refused; set it at any time. */
  refuse: number;
  /** Requests refused so far. */
  refused: number;
}

/** Forwards to 127.0.0.1:`target`; returns the proxy's port. */
export async function throttlingProxy(target: number, budget: ThrottleBudget): Promise<number> {
  const server = createServer((req, res) => {
    if (budget.refuse > 0) {
      budget.refuse--;
      budget.refused++;
      req.resume();
      res.writeHead(503, { 'content-type': 'application/xml' }).end(SLOW_DOWN);
      return;
    }
    const up = request(
      { host: '127.0.0.1', port: target, path: req.url, method: req.method, headers: req.headers },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onTeardown(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return (server.address() as AddressInfo).port;
}
