// A relay between the mount and its store that can be told to misbehave: stall (accept and
// never answer), or cut a GET's body after some bytes. Plain HTTP on a random loopback port.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTeardown } from '../../helpers/cleanup.ts';
import type { S3Server } from '../../helpers/s3rver.ts';

export type RelayMode =
  | { kind: 'pass' }
  /** Accept requests (of `method` only, when given) and never answer. */
  | { kind: 'stall'; method?: string }
  /** Answer every request of this method with this status (an S3 error body). */
  | { kind: 'status'; status: number; method: string }
  /** Cut the body of the next `count` object GETs (not listings) after `bytes` bytes. */
  | { kind: 'cut'; bytes: number; count: number };

export interface Relay {
  readonly server: S3Server;
  mode: RelayMode;
  readonly requests: string[];
}

export async function startRelay(upstream: S3Server): Promise<Relay> {
  const agent = new http.Agent({ keepAlive: true });
  const stalled = new Set<http.ServerResponse>();
  const relay: Relay = { server: upstream, mode: { kind: 'pass' }, requests: [] };
  const srv = http.createServer((req, res) => {
    relay.requests.push(`${req.method} ${req.url} ${req.headers.range ?? ''}`);
    const mode = relay.mode;
    if (mode.kind === 'stall' && (mode.method === undefined || mode.method === req.method)) {
      req.resume();
      stalled.add(res);
      return;
    }
    if (mode.kind === 'status' && req.method === mode.method) {
      req.resume();
      req.on('end', () => {
        res.writeHead(mode.status, { 'content-type': 'application/xml' });
        res.end('<?xml version="1.0"?><Error><Code>SlowDown</Code><Message>slow down</Message></Error>');
      });
      return;
    }
    const up = http.request(
      { host: '127.0.0.1', port: upstream.port, method: req.method, path: req.url, headers: req.headers, agent },
      (ur) => {
        res.writeHead(ur.statusCode ?? 502, ur.headers);
        const isObjectGet = req.method === 'GET' && !(req.url ?? '').includes('list-type');
        if (mode.kind === 'cut' && mode.count > 0 && isObjectGet && (ur.statusCode ?? 500) < 300) {
          mode.count -= 1;
          let left = mode.bytes;
          ur.on('data', (c: Buffer) => {
            if (left <= 0) return;
            res.write(c.subarray(0, left));
            left -= c.length;
            if (left <= 0) {
              ur.destroy();
              setTimeout(() => res.socket?.destroy(), 20);
            }
          });
          return;
        }
        ur.pipe(res);
      },
    );
    up.on('error', () => res.socket?.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  onTeardown(async () => {
    for (const r of stalled) r.socket?.destroy();
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
    agent.destroy();
  });
  Object.assign(relay, { server: { ...upstream, endpoint: `http://127.0.0.1:${port}`, port } });
  return relay;
}
