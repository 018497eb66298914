// A store that speaks HTTP/1.1 byte by byte as a test tells it to: a raw TCP server on a random
// loopback port that parses each request (method, path, Range) and lets the test write whatever
// answer bytes it wants, so that the mount's own HTTP client (fuse/s3/http1-pool.ts) and its data
// path can be fed interim answers, lying headers, split or extra bytes.

import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { DataPath } from '../../../fuse/s3/data-path.ts';
import type { ObjectClient } from '../../../fuse/s3/object-client.ts';
import { SlabPool } from '../../../fuse/s3/slab-pool.ts';
import { onTeardown } from '../../helpers/cleanup.ts';

export interface RawRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  /** The Range asked for, end exclusive; undefined when none. */
  readonly range: { start: number; end: number } | undefined;
  /** Requests seen on this connection before this one. */
  readonly onConnection: number;
  readonly socket: Socket;
}

export type Answerer = (req: RawRequest) => void;

export interface RawStore {
  readonly url: string;
  readonly requests: RawRequest[];
  answer: Answerer;
  readonly sockets: Set<Socket>;
}

/** A 206 for `range` of `body`, as S3 frames it. */
export function partial(body: Buffer, range: { start: number; end: number }, etag = '"v1"'): Buffer {
  const end = Math.min(range.end, body.length);
  const head =
    `HTTP/1.1 206 Partial Content\r\nContent-Length: ${end - range.start}\r\n` +
    `Content-Range: bytes ${range.start}-${end - 1}/${body.length}\r\nETag: ${etag}\r\n` +
    `Last-Modified: Tue, 24 Nov 2026 12:00:00 GMT\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), body.subarray(range.start, end)]);
}

export async function startRawStore(answer: Answerer, host = '127.0.0.1'): Promise<RawStore> {
  const sockets = new Set<Socket>();
  const store: RawStore = { url: '', requests: [], answer, sockets };
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let pending = Buffer.alloc(0);
    let count = 0;
    socket.on('data', (data: Buffer) => {
      pending = Buffer.concat([pending, data]);
      for (;;) {
        const end = pending.indexOf('\r\n\r\n');
        if (end < 0) return;
        const text = pending.subarray(0, end).toString('latin1');
        const lines = text.split('\r\n');
        const [method, path] = lines[0]!.split(' ');
        const headers: Record<string, string> = {};
        for (const line of lines.slice(1)) {
          const i = line.indexOf(':');
          headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
        }
        const length = Number(headers['content-length'] ?? 0);
        if (pending.length < end + 4 + length) return;
        pending = pending.subarray(end + 4 + length);
        const m = /^bytes=(\d+)-(\d+)$/.exec(headers.range ?? '');
        const range = m ? { start: Number(m[1]), end: Number(m[2]) + 1 } : undefined;
        const req: RawRequest = { method: method!, path: path!, headers, range, onConnection: count++, socket };
        store.requests.push(req);
        store.answer(req);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  const shown = host.includes(':') ? `[${host}]` : host;
  Object.assign(store, { url: `http://${shown}:${(server.address() as AddressInfo).port}` });
  onTeardown(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  });
  return store;
}

/** The mount's data path on `store`'s bucket `b`, as the mount builds it. */
export function dataPathOn(store: RawStore, options: { maxAttempts?: number; idleTimeoutMs?: number } = {}): DataPath {
  const dp = new DataPath({
    bucketUrl: new URL(`${store.url}/b`),
    region: 'us-east-1',
    credentials: async () => ({ accessKeyId: 'k', secretAccessKey: 's' }),
    maxAttempts: options.maxAttempts ?? 3,
    idleTimeoutMs: options.idleTimeoutMs ?? 3000,
    maxSockets: 8,
    slabs: new SlabPool(),
  });
  onTeardown(() => dp.close());
  return dp;
}

/** The reads an open file's readahead needs, served by a data path (as SdkObjectClient does). */
export function readClient(dp: DataPath): ObjectClient {
  const slabs = (dp as unknown as { slabs: SlabPool }).slabs;
  return {
    get: async (key, range) => (await dp.getBuffer(key, range)).body,
    getPieces: (key, range, onPiece) => dp.getPieces(key, range, onPiece),
    releasePiece: (piece) => slabs.release(piece),
  } as ObjectClient;
}
