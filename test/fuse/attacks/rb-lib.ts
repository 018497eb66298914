// A proxy in front of a store for the rb attacks: it can change what goes up (a request's headers)
// and what comes back (an answer's headers, a listing's XML), as proxies and CDNs in front of S3
// servers do. Torn down after the file (test/helpers/cleanup.ts).

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTeardown } from '../../helpers/cleanup.ts';
import type { S3Server } from '../../helpers/s3rver.ts';

export interface ProxyHooks {
  /** Changes the headers sent upstream (`key` is '' for the bucket itself). */
  request?: (method: string, key: string, headers: http.OutgoingHttpHeaders) => void;
  /** Changes the answer's headers. */
  answer?: (method: string, key: string, status: number, headers: http.OutgoingHttpHeaders) => void;
  /** Rewrites a listing's body (ListObjectsV2). */
  listing?: (xml: string) => string;
  /** While true, every request's connection is reset at once: the store is down. */
  down?: () => boolean;
  /** An answer the proxy gives itself instead of asking upstream (e.g. a 503). */
  refuse?: (req: Seen) => { status: number; body: string } | undefined;
  /** Bytes of the answer's body after which its connection is reset; undefined: all. */
  cut?: (req: Seen) => number | undefined;
}

export interface Seen {
  readonly method: string;
  readonly key: string;
  readonly range: string;
  readonly ifMatch: string;
  status?: number;
  /** Body bytes sent back. */
  bytes?: number;
}

export async function startProxy(upstream: S3Server, bucket: string, hooks: ProxyHooks) {
  const agent = new http.Agent({ keepAlive: true });
  const seen: Seen[] = [];
  const srv = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = decodeURIComponent(url.pathname);
    const key = path.startsWith(`/${bucket}/`) ? path.slice(bucket.length + 2) : '';
    const method = req.method ?? '';
    const info: Seen = { method, key, range: String(req.headers.range ?? ''), ifMatch: String(req.headers['if-match'] ?? '') };
    seen.push(info);
    if (hooks.down?.()) {
      info.status = 0;
      req.socket.destroy();
      return;
    }
    const refusal = hooks.refuse?.(info);
    if (refusal) {
      info.status = refusal.status;
      req.resume();
      res.writeHead(refusal.status, { 'content-type': 'application/xml', 'content-length': String(Buffer.byteLength(refusal.body)) });
      res.end(refusal.body);
      return;
    }
    const headers: http.OutgoingHttpHeaders = { ...req.headers };
    hooks.request?.(method, key, headers);
    const up = http.request({ host: '127.0.0.1', port: upstream.port, method, path: req.url, headers, agent }, (ur) => {
      info.status = ur.statusCode;
      const out: http.OutgoingHttpHeaders = { ...ur.headers };
      hooks.answer?.(method, key, ur.statusCode ?? 502, out);
      const listing = hooks.listing && method === 'GET' && key === '' && url.searchParams.has('list-type');
      if (listing) {
        const parts: Buffer[] = [];
        ur.on('data', (c: Buffer) => parts.push(c));
        ur.on('end', () => {
          const body = Buffer.from(hooks.listing!(Buffer.concat(parts).toString('utf8')), 'utf8');
          delete out['transfer-encoding'];
          out['content-length'] = String(body.length);
          res.writeHead(ur.statusCode ?? 502, out);
          res.end(body);
        });
        return;
      }
      res.writeHead(ur.statusCode ?? 502, out);
      info.bytes = 0;
      ur.on('data', (c: Buffer) => (info.bytes! += c.length));
      const cutAt = hooks.cut?.(info);
      if (cutAt === undefined) {
        ur.pipe(res);
        return;
      }
      let sent = 0;
      ur.on('data', (c: Buffer) => {
        if (sent >= cutAt) return;
        const part = c.subarray(0, cutAt - sent);
        sent += part.length;
        res.write(part);
        if (sent >= cutAt) {
          ur.destroy();
          res.socket?.destroy();
        }
      });
      ur.on('end', () => res.end());
    });
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
  const server: S3Server = { ...upstream, endpoint: `http://127.0.0.1:${port}`, port };
  return { server, seen };
}
