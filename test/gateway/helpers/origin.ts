// A real HTTP origin on loopback for gateway tests: routes are plain functions, every request is
// counted per path, and a route can stream slowly, die mid-body or lie about its content.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTeardown } from '../../helpers/cleanup.ts';

export type Route = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

export interface Origin {
  readonly url: string;
  readonly port: number;
  readonly server: Server;
  /** Requests seen per path (with query). */
  readonly hits: Map<string, number>;
  /** Request headers of the last request per path. */
  readonly lastHeaders: Map<string, IncomingMessage['headers']>;
  route(path: string, fn: Route): void;
  count(path: string): number;
  close(): Promise<void>;
}

export async function startOrigin(routes: Record<string, Route> = {}): Promise<Origin> {
  const table = new Map(Object.entries(routes));
  const hits = new Map<string, number>();
  const lastHeaders = new Map<string, IncomingMessage['headers']>();
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    lastHeaders.set(path, req.headers);
    const fn = table.get(path) ?? table.get(path.split('?')[0]!);
    if (!fn) {
      res.writeHead(404, { 'content-length': 0 });
      res.end();
      return;
    }
    Promise.resolve(fn(req, res)).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  onTeardown(close);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    server,
    hits,
    lastHeaders,
    route: (path, fn) => table.set(path, fn),
    count: (path) => hits.get(path) ?? 0,
    close,
  };
}

/** A route answering `body` with the given headers. */
export function fixed(
  body: Buffer | string,
  headers: Record<string, string | number> = {},
  status = 200,
): Route {
  const buf = typeof body === 'string' ? Buffer.from(body) : body;
  return (req, res) => {
    res.writeHead(status, { 'content-length': buf.length, ...headers });
    res.end(req.method === 'HEAD' ? undefined : buf);
  };
}

/** Streams `body` in `chunk`-byte pieces with `delayMs` between them. */
export function slow(
  body: Buffer,
  chunk: number,
  delayMs: number,
  headers: Record<string, string | number> = {},
): Route {
  return async (_req, res) => {
    res.writeHead(200, { 'content-length': body.length, ...headers });
    for (let off = 0; off < body.length; off += chunk) {
      if (res.destroyed) return;
      res.write(body.subarray(off, off + chunk));
      await new Promise((r) => setTimeout(r, delayMs));
    }
    res.end();
  };
}

/** Sends the headers for `body` but only `sendBytes` of it, then cuts the connection. */
export function truncated(
  body: Buffer,
  sendBytes: number,
  headers: Record<string, string | number> = {},
): Route {
  return async (_req, res) => {
    res.writeHead(200, { 'content-length': body.length, ...headers });
    res.write(body.subarray(0, sendBytes));
    await new Promise((r) => setTimeout(r, 50));
    res.socket?.destroy();
  };
}
