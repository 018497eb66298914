// An origin written byte by byte on node:net, for the behaviours of real servers that node:http
// smooths over: HTTP/1.0 answers, bodies delimited by closing the connection, chunked bodies, and
// keep-alive servers that close idle connections whenever they like (Apache's KeepAliveTimeout
// and MaxKeepAliveRequests). The request path chooses the behaviour; see `rawPath`.

import { createHash } from 'node:crypto';
import { createServer, type Socket } from 'node:net';
import { seeded } from '../../../lib/seeded.ts';
import { onTeardown } from '../../helpers/cleanup.ts';

/**
 * How the connection is treated: HTTP/1.0; 1.1 with `Connection: close`; 1.1 kept alive; kept
 * alive but closed once idle for 1–1.5 s (a keep-alive timeout); kept alive, but every
 * 4th request that reuses a connection finds it closed, unanswered (a server that closed an idle
 * connection just as the client reused it: the race every keep-alive client must survive, made
 * frequent).
 */
export const CONNS = ['http10', 'close', 'keep-alive', 'flaky', 'racy'] as const;
export type Conn = (typeof CONNS)[number];
/** How the body's end is marked: Content-Length, chunked, or closing the connection. */
export type Framing = 'length' | 'chunked' | 'eof';

/** The behaviours that exist: chunked is HTTP/1.1 only, and a body ended by EOF ends the connection. */
export const CASES: readonly { conn: Conn; framing: Framing }[] = [
  { conn: 'http10', framing: 'length' },
  { conn: 'http10', framing: 'eof' },
  { conn: 'close', framing: 'length' },
  { conn: 'close', framing: 'chunked' },
  { conn: 'close', framing: 'eof' },
  { conn: 'keep-alive', framing: 'length' },
  { conn: 'keep-alive', framing: 'chunked' },
  { conn: 'racy', framing: 'length' },
  { conn: 'racy', framing: 'chunked' },
  // Last, so that the traffic that follows (other modes, cached rounds) leaves them idle to close.
  { conn: 'flaky', framing: 'length' },
  { conn: 'flaky', framing: 'chunked' },
];

/** `…/<conn>/<framing>/<size>`: the path tail the origin reads; anything may come before it. */
export function rawPath(prefix: string, c: { conn: Conn; framing: Framing }, size: number): string {
  return `${prefix}/${c.conn}/${c.framing}/${size}`;
}

/** The body of `size` bytes the origin sends (the same for every path with that size). */
export function rawBody(size: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) b[i] = (i * 31 + (i >> 8) * 7 + 13) & 0xff;
  return b;
}

export function sha256(b: Buffer | Uint8Array): string {
  return createHash('sha256').update(b).digest('hex');
}

export interface RawOrigin {
  readonly url: string;
  /** Connections closed while idle by the `flaky` behaviour. */
  idleCloses(): number;
  /** Requests the `racy` behaviour dropped by closing their connection. */
  dropped(): number;
}

export async function startRawOrigin(seed = 24): Promise<RawOrigin> {
  const random = seeded(seed);
  const sockets = new Set<Socket>();
  let idleCloses = 0;
  let reuses = 0;
  let dropped = 0;
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffered = Buffer.alloc(0);
    let idle: NodeJS.Timeout | undefined;
    let closing = false;
    let answered = 0;
    socket.on('data', (chunk) => {
      // A request that arrives after we closed our side is never answered, as with a real server.
      if (closing) return;
      clearTimeout(idle);
      buffered = Buffer.concat([buffered, chunk]);
      for (let end = buffered.indexOf('\r\n\r\n'); end >= 0; end = buffered.indexOf('\r\n\r\n')) {
        const head = buffered.subarray(0, end).toString('latin1');
        buffered = buffered.subarray(end + 4);
        if (answered > 0 && head.includes('/racy/') && ++reuses % 4 === 0) {
          dropped++;
          closing = true;
          socket.end();
          return;
        }
        answered++;
        const keep = answer(socket, head);
        if (!keep) return;
        if (keep === 'flaky') {
          // The timeout runs from when the response was handed to the kernel, and is long enough
          // for the client to have read the body even on a loaded machine: a FIN arriving while
          // a kept-alive body is still being read is a known undici bug (docs/DEPENDENCIES.md).
          socket.write('', () => {
            idle = setTimeout(() => {
              idleCloses++;
              closing = true;
              socket.end();
            }, 1000 + Math.floor(random() * 500));
          });
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTeardown(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, idleCloses: () => idleCloses, dropped: () => dropped };
}

/** Writes the response for one request head; says whether (and how) the connection stays open. */
function answer(socket: Socket, head: string): false | 'keep' | 'flaky' {
  const [method = 'GET', target = '/'] = head.split('\r\n')[0]!.split(' ');
  const parts = new URL(target, 'http://x').pathname.split('/');
  const [conn, framing, sizeText] = parts.slice(-3) as [Conn, Framing, string];
  const size = Number(sizeText);
  if (!CONNS.includes(conn) || !Number.isInteger(size)) {
    socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    return false;
  }
  const body = rawBody(size);
  const lines = [
    conn === 'http10' ? 'HTTP/1.0 200 OK' : 'HTTP/1.1 200 OK',
    'Content-Type: application/octet-stream',
    'Cache-Control: max-age=600',
    `ETag: "${sha256(body).slice(0, 16)}"`,
    'Last-Modified: Mon, 02 Nov 2026 10:00:00 GMT',
  ];
  if (conn === 'close') lines.push('Connection: close');
  if (framing === 'length') lines.push(`Content-Length: ${size}`);
  if (framing === 'chunked') lines.push('Transfer-Encoding: chunked');
  socket.write(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  if (method !== 'HEAD') {
    if (framing === 'chunked') {
      for (let off = 0; off < size; off += 16_384) {
        const piece = body.subarray(off, off + 16_384);
        socket.write(`${piece.length.toString(16)}\r\n`);
        socket.write(piece);
        socket.write('\r\n');
      }
      socket.write('0\r\n\r\n');
    } else socket.write(body);
  }
  if (conn === 'http10' || conn === 'close' || framing === 'eof') {
    socket.end();
    return false;
  }
  return conn === 'flaky' ? 'flaky' : 'keep';
}
