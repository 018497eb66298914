// An HTTP relay in front of a real store (s3rver) that shapes the answers to object GETs the way a
// proxy or CDN might: early hints (103) or 102 Processing before the answer, a 206 turned into a
// 200 that still carries only the range, or a body paced to a given rate. Listings, HEADs and
// PUTs pass unchanged. Plain HTTP on a random loopback port, closed in teardown.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTeardown } from '../../helpers/cleanup.ts';
import type { S3Server } from '../../helpers/s3rver.ts';

export interface Shaping {
  /** Send `HTTP/1.1 103 Early Hints` (with a Link header) before each answer. */
  earlyHints?: boolean;
  /** Turn each 206 into a 200 with the same body and Content-Length (no Content-Range). */
  rangeAs200?: boolean;
  /** Pace each object GET's body to this many bytes per second. */
  bytesPerSecond?: number;
  /** Send no ETag header on any answer (some S3-compatible gateways send none). */
  noEtag?: boolean;
  /**
   * The next ranged object GET that starts past byte 0 is answered as if the object had this
   * many bytes (its Content-Range total and body cut there), as after a replacement by a shorter
   * object; then this is cleared.
   */
  shrinkOnce?: number;
}

export interface ShapingRelay {
  readonly server: S3Server;
  shaping: Shaping;
  /** Object GETs whose body is still being sent. */
  readonly open: Set<http.ServerResponse>;
  /** Each object GET: its Range, when it began and when its answer ended or was closed (ms). */
  readonly gets: { range: string; began: number; ended?: number; sent: number }[];
}

export async function startShapingRelay(upstream: S3Server, shaping: Shaping = {}): Promise<ShapingRelay> {
  const agent = new http.Agent({ keepAlive: true });
  const relay: ShapingRelay = { server: upstream, shaping, open: new Set(), gets: [] };
  const srv = http.createServer((req, res) => {
    const s = relay.shaping;
    const isObjectGet = req.method === 'GET' && !/[?&](list-type|location|prefix|delimiter)=/.test(req.url ?? '');
    if (s.earlyHints) res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
    const up = http.request(
      { host: '127.0.0.1', port: upstream.port, method: req.method, path: req.url, headers: req.headers, agent },
      (ur) => {
        const headers = { ...ur.headers };
        let status = ur.statusCode ?? 502;
        if (s.noEtag) delete headers.etag;
        const range = /^bytes=(\d+)-(\d+)$/.exec(String(req.headers.range ?? ''));
        if (isObjectGet && s.shrinkOnce !== undefined && status === 206 && range && Number(range[1]) > 0) {
          const total = s.shrinkOnce;
          s.shrinkOnce = undefined;
          const start = Number(range[1]);
          const end = Math.min(Number(range[2]) + 1, total);
          headers['content-range'] = `bytes ${start}-${end - 1}/${total}`;
          headers['content-length'] = String(end - start);
          res.writeHead(206, headers);
          let left = end - start;
          ur.on('data', (c: Buffer) => {
            if (left > 0) res.write(c.subarray(0, left));
            left -= c.length;
          });
          ur.on('end', () => res.end());
          return;
        }
        if (isObjectGet && s.rangeAs200 && status === 206) {
          status = 200;
          delete headers['content-range'];
        }
        res.writeHead(status, headers);
        if (!isObjectGet || !s.bytesPerSecond) {
          ur.pipe(res);
          return;
        }
        relay.open.add(res);
        const get = { range: String(req.headers.range ?? ''), began: Date.now(), ended: undefined as number | undefined, sent: 0 };
        relay.gets.push(get);
        res.on('close', () => {
          get.ended = Date.now();
          relay.open.delete(res);
          ur.destroy();
        });
        const slice = Math.max(1024, Math.floor(s.bytesPerSecond / 20));
        const queue: Buffer[] = [];
        let ended = false;
        const timer = setInterval(() => {
          let budget = slice;
          while (budget > 0 && queue.length > 0) {
            const head = queue[0]!;
            const n = Math.min(budget, head.length);
            res.write(head.subarray(0, n));
            get.sent += n;
            budget -= n;
            if (n === head.length) queue.shift();
            else queue[0] = head.subarray(n);
          }
          if (queue.length < 4) ur.resume();
          if (ended && queue.length === 0) {
            clearInterval(timer);
            res.end();
          }
        }, 50);
        res.on('close', () => clearInterval(timer));
        ur.on('data', (c: Buffer) => {
          queue.push(c);
          if (queue.length >= 4) ur.pause();
        });
        ur.on('end', () => (ended = true));
      },
    );
    up.on('error', () => res.socket?.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  onTeardown(async () => {
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
    agent.destroy();
  });
  Object.assign(relay, { server: { ...upstream, endpoint: `http://127.0.0.1:${port}`, port } });
  return relay;
}
