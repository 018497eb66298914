// The sockets of the mount's data path (data-path.ts), opened for undici by a custom connector so
// that a plain-HTTP socket reads into two buffers it owns and uses again instead of a fresh 64 KiB
// buffer per read.
//
// Why: Node's default socket allocates new memory for every read. V8 counts that memory against
// its external-memory limit and answers every few tens of MB of it with a full mark-compact, so
// reading 1 GB cost about 60 full collections and, in a bare loop of 32 MiB ranged GETs with the
// bytes dropped, 0.9 CPU s per GB and 185 MB peak resident; with the reads below, 0.4 s and 113 MB
// (docs/BENCHMARKING.md, "What each mount costs the machine").
//
// How it stays correct: a socket with `onread` hands each read to a callback instead of pushing it
// into the stream; the callback pushes a view of the buffer, and undici takes it out with
// socket.read() on the 'readable' event. Node emits that event before it reads the socket again,
// and undici's HTTP parser copies what it is given and hands body bytes to the request's handler
// synchronously (the data path copies them out at once), so a view has been used up before its
// buffer is read into again. When it has not (the stream still holds unread data at the next
// read), the next read goes to fresh memory instead of the buffer that view points into.
//
// TLS sockets decrypt into memory of their own: https endpoints use undici's connector unchanged.

import { connect, type Socket } from 'node:net';
import { buildConnector } from 'undici';

/** One socket read at most: what Node reads by default, and what the kernel tends to have ready. */
const READ_SIZE = 64 * 1024;

export interface ConnectorOptions {
  /** A connect that hangs this long means the endpoint is down, not slow. */
  readonly connectTimeoutMs: number;
  /**
   * A socket that sends and receives nothing for this long while a request is on it is destroyed
   * with ETIMEDOUT (the request is then retried, see data-path.ts).
   */
  readonly idleTimeoutMs: number;
}

type Callback = (err: Error | null, socket: Socket | null) => void;
interface ConnectOpts {
  readonly hostname: string;
  readonly port: string;
  readonly protocol: string;
}

function timedOut(socket: Socket, what: string): void {
  const err = Object.assign(new Error(`${what}: no byte sent or received in time`), { code: 'ETIMEDOUT' });
  socket.destroy(err);
}

/** A plain TCP socket whose reads land in two buffers of its own (see the top of this file). */
function pooledSocket(opts: ConnectOpts, options: ConnectorOptions, cb: Callback): Socket {
  const ring = [Buffer.allocUnsafeSlow(READ_SIZE), Buffer.allocUnsafeSlow(READ_SIZE)];
  let next = 0;
  let consumed = true;
  const socket: Socket = connect({
    host: opts.hostname,
    port: Number(opts.port || 80),
    noDelay: true,
    keepAlive: true,
    onread: {
      buffer: () => {
        if (!consumed) return Buffer.allocUnsafe(READ_SIZE);
        next ^= 1;
        return ring[next]!;
      },
      callback: (n: number, buf: Buffer) => {
        consumed = socket.readableLength === 0;
        socket.push(buf.subarray(0, n));
        return true;
      },
    },
  });
  const connectTimer = setTimeout(
    () => timedOut(socket, `connect to ${opts.hostname}:${opts.port}`),
    options.connectTimeoutMs,
  );
  // undici watches the socket's errors itself once it has it: answer once.
  const settle = (err?: Error) => {
    clearTimeout(connectTimer);
    socket.off('error', settle);
    socket.off('connect', settle);
    cb(err ?? null, err ? null : socket);
  };
  socket.once('connect', settle).once('error', settle);
  return socket;
}

/** The `connect` option of the data path's undici Pool. */
export function dataPathConnector(options: ConnectorOptions) {
  const tls = buildConnector({ timeout: options.connectTimeoutMs, allowH2: false });
  return (opts: ConnectOpts, cb: Callback): Socket => {
    const done: Callback = (err, socket) => {
      if (socket) {
        socket.setTimeout(options.idleTimeoutMs, () => timedOut(socket, `${opts.hostname}:${opts.port}`));
      }
      cb(err, socket);
    };
    if (opts.protocol === 'https:') return tls(opts as unknown as buildConnector.Options, done as never) as unknown as Socket;
    return pooledSocket(opts, options, done);
  };
}
