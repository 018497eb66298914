// Shared by the abort-* attacks: a relay in front of an S3 server (loopback only) that, per
// request, passes it, refuses it, answers it late (after the server carried it out), holds it
// before forwarding (and drops it when the client goes away first, as a request lost on a stalled
// link), never answers it, or resets the connection. Every request is recorded.

import { createServer, request } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { onTeardown } from '../../helpers/cleanup.ts';
import { type MinioServer, startMinio } from '../../helpers/minio.ts';
import { Bucket } from './hidden-harness.ts';

export type Verdict =
  | 'pass'
  | 'hang'
  | 'reset'
  | { status: number; body: string }
  | { lateMs: number }
  | { holdMs: number };

export interface Seen {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly at: number;
  /** What became of it: forwarded, dropped (client left first), answered locally, ... */
  fate: string;
}

export const SLOW_DOWN = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`;
export const INTERNAL = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>`;

export const isAbort = (method: string, query: URLSearchParams) => method === 'DELETE' && query.has('uploadId');
export const isCreate = (method: string, query: URLSearchParams) => method === 'POST' && query.has('uploads');

export async function startRelay(
  origin: string,
  decide: (method: string, path: string, query: URLSearchParams) => Verdict,
): Promise<{ url: string; seen: Seen[] }> {
  const to = new URL(origin);
  const seen: Seen[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const [path, q] = (req.url ?? '/').split('?');
    const query = new URLSearchParams(q ?? '');
    const s: Seen = { method: req.method ?? '', path: path!, query, at: Date.now(), fate: 'pending' };
    seen.push(s);
    const v = decide(s.method, s.path, query);
    if (v === 'hang') {
      s.fate = 'hung';
      req.resume();
      return;
    }
    if (v === 'reset') {
      s.fate = 'reset';
      req.socket.destroy();
      return;
    }
    if (v !== 'pass' && 'status' in v) {
      s.fate = `answered ${v.status}`;
      req.resume();
      req.on('end', () => {
        res.writeHead(v.status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(v.body) });
        res.end(v.body);
      });
      return;
    }
    const body: Buffer[] = [];
    req.on('data', (c: Buffer) => body.push(c));
    req.on('end', () => {
      const forward = () => {
        if (req.socket.destroyed || res.destroyed) {
          s.fate = 'dropped';
          return;
        }
        s.fate = 'forwarded';
        const up = request(
          { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
          (ur) => {
            const chunks: Buffer[] = [];
            ur.on('data', (c: Buffer) => chunks.push(c));
            ur.on('end', () => {
              s.fate = `forwarded ${ur.statusCode}`;
              const send = () => {
                if (res.destroyed) return;
                res.writeHead(ur.statusCode ?? 502, ur.headers);
                res.end(Buffer.concat(chunks));
              };
              if (v !== 'pass' && 'lateMs' in v) setTimeout(send, v.lateMs);
              else send();
            });
          },
        );
        up.on('error', () => res.destroy());
        up.end(Buffer.concat(body));
      };
      if (v !== 'pass' && 'holdMs' in v) setTimeout(forward, v.holdMs);
      else forward();
    });
  });
  server.on('connection', (c) => {
    sockets.add(c);
    c.on('close', () => sockets.delete(c));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTeardown(async () => {
    for (const c of sockets) c.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** The mount's JSON log lines at `level` (40 warn, 50 error) or above. */
export function logLines(output: string, minLevel = 40): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const o = JSON.parse(line) as Record<string, unknown>;
      if (typeof o.level === 'number' && o.level >= minLevel) out.push(o);
    } catch {
      /* not JSON */
    }
  }
  return out;
}

/** MinIO with a fresh bucket `name`-PID, behind a relay that asks `decide` about each request. */
export async function relayedMinio(
  name: string,
  decide: (method: string, query: URLSearchParams) => Verdict,
): Promise<{ server: MinioServer; bucket: Bucket; relay: Awaited<ReturnType<typeof startRelay>> }> {
  const server = await startMinio();
  const bucket = new Bucket(server, `${name}-${process.pid}`);
  await bucket.create();
  const relay = await startRelay(server.endpoint, (m, _p, q) => decide(m, q));
  return { server, bucket, relay };
}
