// Many hostile origins on loopback for the gateway's "hostile origins" case: one listener per
// origin, on addresses 127.77.x.y (the whole of 127.0.0.0/8 is the loopback interface on Linux)
// and ephemeral ports, each with one personality taken from what real servers do: HTTP/1.0 bodies
// ended by closing, `Connection: close` with chunks, keep-alive servers that close idle sockets at
// random, resets mid-body, stalls, a hang, and a Content-Length that lies either way. Written on
// node:net, byte by byte, because node:http would not lie. Bodies are slices of one random buffer
// at an offset fixed by the path, so a body served for the wrong origin or path is wrong bytes.

import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { seeded } from '../../lib/seeded.ts';

/** The personalities, with whether a client through a correct proxy gets the whole body. */
export const BEHAVIOURS = {
  'http10-eof': 'complete',
  'http10-length': 'complete',
  'close-chunked': 'complete',
  'keepalive-random-close': 'complete',
  'stall-then-resume': 'complete',
  'length-too-long': 'complete',
  'reset-mid-body': 'cut',
  'length-too-short': 'cut',
  'hang-mid-body': 'cut',
} as const;
export type Behaviour = keyof typeof BEHAVIOURS;

/** Weights per 100 origins: hangs cost an idle timeout each, so they are rare. */
const WEIGHTS: readonly [Behaviour, number][] = [
  ['http10-eof', 16],
  ['http10-length', 10],
  ['close-chunked', 12],
  ['keepalive-random-close', 22],
  ['stall-then-resume', 6],
  ['length-too-long', 10],
  ['reset-mid-body', 10],
  ['length-too-short', 13],
  ['hang-mid-body', 1],
];

export function behaviourOf(index: number): Behaviour {
  let slot = (index * 37) % 100;
  for (const [b, w] of WEIGHTS) {
    if (slot < w) return b;
    slot -= w;
  }
  return 'http10-eof';
}

/** Body sizes: mostly small, some at the 64/128 KiB boundaries where undici 7 crashed, some 1 MiB. */
const SIZES = [0, 1, 700, 4096, 16_383, 65_535, 65_537, 80_000, 131_071, 131_073, 300_000, 1_048_576];

export function sizeOf(index: number, path: number): number {
  return SIZES[(index * 7 + path * 5) % SIZES.length]!;
}

const POOL_BYTES = 2 * 2 ** 20;

export interface HostileOrigin {
  /** `http://127.77.x.y:port` of each origin, in index order. */
  readonly urls: readonly string[];
  /** The bytes a correct answer for `/o<index>/p<path>` carries. */
  body(index: number, path: number): Buffer;
  /** Connections answered, by personality. */
  readonly answered: Map<Behaviour, number>;
  close(): Promise<void>;
}

function address(i: number): string {
  const n = i + 1;
  return `127.77.${(n >> 8) & 255}.${n & 255}`;
}

export async function startHostileOrigins(count: number, portsPerAddress: number, seed = 24): Promise<HostileOrigin> {
  const pool = randomBytes(POOL_BYTES + 2 ** 20);
  const random = seeded(seed);
  const sockets = new Set<Socket>();
  const servers: Server[] = [];
  const answered = new Map<Behaviour, number>();
  const body = (index: number, path: number) => {
    const off = createHash('sha256').update(`${index}/${path}`).digest().readUInt32BE(0) % POOL_BYTES;
    return pool.subarray(off, off + sizeOf(index, path));
  };
  const urls: string[] = [];
  for (let i = 0; i < count; i++) {
    const behaviour = behaviourOf(i);
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
      serve(socket, behaviour, body, random, () => answered.set(behaviour, (answered.get(behaviour) ?? 0) + 1));
    });
    const host = address(Math.floor(i / portsPerAddress));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, resolve);
    });
    servers.push(server);
    urls.push(`http://${host}:${(server.address() as { port: number }).port}`);
  }
  return {
    urls,
    body,
    answered,
    close: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    },
  };
}

/** Reads request heads off one connection and answers each in the origin's personality. */
function serve(
  socket: Socket,
  behaviour: Behaviour,
  body: (index: number, path: number) => Buffer,
  random: () => number,
  count: () => void,
): void {
  let buffered = Buffer.alloc(0);
  let idle: NodeJS.Timeout | undefined;
  socket.on('data', (chunk) => {
    clearTimeout(idle);
    buffered = Buffer.concat([buffered, chunk]);
    for (let end = buffered.indexOf('\r\n\r\n'); end >= 0; end = buffered.indexOf('\r\n\r\n')) {
      const head = buffered.subarray(0, end).toString('latin1');
      buffered = buffered.subarray(end + 4);
      const m = /^(\S+) \S*\/o(\d+)\/p(\d+)/.exec(head);
      if (!m) {
        socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
        return;
      }
      count();
      const b = body(Number(m[2]), Number(m[3]));
      const keep = answer(socket, behaviour, m[1] === 'HEAD' ? undefined : b, random);
      if (!keep) return;
      // A keep-alive timeout chosen at random per response, sometimes none at all: the close may
      // land while the proxy still reads the body, or just as it sends the next request.
      const wait = random() < 0.3 ? 0 : Math.floor(random() * 400);
      socket.write('', () => {
        idle = setTimeout(() => socket.end(), wait);
      });
    }
  });
}

function head(status: string, fields: readonly string[]): string {
  return [status, 'Content-Type: application/octet-stream', 'Cache-Control: max-age=600', ...fields].join('\r\n') + '\r\n\r\n';
}

/** Writes one response; true when the connection stays open for another request. */
function answer(socket: Socket, behaviour: Behaviour, b: Buffer | undefined, random: () => number): boolean {
  const size = b?.length ?? 0;
  const none = Buffer.alloc(0);
  const half = Math.floor(size / 2);
  const length = [`Content-Length: ${size}`];
  switch (behaviour) {
    case 'http10-eof':
      socket.end(Buffer.concat([Buffer.from(head('HTTP/1.0 200 OK', []), 'latin1'), b ?? none]));
      return false;
    case 'http10-length':
      socket.write(head('HTTP/1.0 200 OK', length), 'latin1');
      socket.end(b ?? none);
      return false;
    case 'close-chunked': {
      socket.write(head('HTTP/1.1 200 OK', ['Connection: close', 'Transfer-Encoding: chunked']), 'latin1');
      for (let off = 0; b && off < size; ) {
        const piece = b.subarray(off, off + 1 + Math.floor(random() * 40_000));
        socket.write(`${piece.length.toString(16)}\r\n`);
        socket.write(piece);
        socket.write('\r\n');
        off += piece.length;
      }
      socket.end('0\r\n\r\n');
      return false;
    }
    case 'keepalive-random-close':
      socket.write(head('HTTP/1.1 200 OK', length), 'latin1');
      if (b) socket.write(b);
      return true;
    case 'length-too-long':
      // Extra bytes after the body: on a kept-alive connection they are a broken next response.
      socket.write(head('HTTP/1.1 200 OK', length), 'latin1');
      if (b) socket.write(Buffer.concat([b, Buffer.from('EXTRA BYTES THAT NO RESPONSE ANNOUNCED\r\n')]));
      return true;
    case 'length-too-short':
      socket.write(head('HTTP/1.1 200 OK', [`Content-Length: ${size + 1000}`, 'Connection: close']), 'latin1');
      socket.end(b ?? none);
      return false;
    case 'reset-mid-body':
      socket.write(head('HTTP/1.1 200 OK', length), 'latin1');
      socket.write(b?.subarray(0, half) ?? none, () => socket.resetAndDestroy());
      return false;
    case 'stall-then-resume':
      socket.write(head('HTTP/1.1 200 OK', [...length, 'Connection: close']), 'latin1');
      socket.write(b?.subarray(0, half) ?? none);
      setTimeout(() => socket.end(b?.subarray(half) ?? none), 300 + Math.floor(random() * 700));
      return false;
    case 'hang-mid-body':
      // Never finishes: the proxy's idle timeout must cut it; the socket is destroyed at close.
      socket.write(head('HTTP/1.1 200 OK', length), 'latin1');
      socket.write(b?.subarray(0, half) ?? none);
      return false;
  }
}
