// A delaying TCP relay: the latency half of the emulated site↔cloud link (this kernel has no
// netem; the bandwidth half is tbf on the veth pair, see link.ts).
//
// Each byte read on one side is written to the other side one one-way delay (RTT/2) later, in
// both directions, and the connection itself is opened one RTT after the client's SYN, as a real
// handshake would cost. A relay that only delayed bytes would still let a single stream run at
// loopback speed, because it acknowledges everything at once; a real TCP sender is bound by its
// window over the RTT. So each direction also keeps a window: bytes count as in flight from the
// moment they are read until one one-way delay after they were handed to the far socket (the
// acknowledgement's trip back), and reading pauses while the window is full. With the default
// 4 MiB window that gives one stream at most 4 MiB / RTT (≈200 MiB/s at 20 ms), close to the
// ≈150 MiB/s one real stream reached on this kind of machine at that RTT.
//
// What it does not model: loss and retransmission, slow start (the window is open from the first
// byte) and the kernel's receive-window autotuning. Requests that need many round trips (small
// files, HEAD-per-entry listings) are delayed exactly as on a real link; bulk streams are bounded
// by window/RTT and by tbf's rate.

import { createServer, type Server, type Socket, connect } from 'node:net';

export interface RelayOptions {
  readonly listenHost: string;
  readonly listenPort: number;
  readonly targetHost: string;
  readonly targetPort: number;
  readonly rttMs: number;
  /** Bytes one direction of one connection may have in flight; see the header. */
  readonly windowBytes: number;
}

export const DEFAULT_WINDOW_BYTES = 4 * 1024 * 1024;

export interface Relay {
  readonly port: number;
  close(): Promise<void>;
}

/** Copies `src` to `dst` with `delayMs` of latency and a window of `windowBytes`. */
export function pipeDelayed(src: Socket, dst: Socket, delayMs: number, windowBytes: number): void {
  const queue: { chunk: Buffer; due: number }[] = [];
  let inFlight = 0;
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  const release = (n: number) => {
    inFlight -= n;
    if (inFlight < windowBytes && src.isPaused()) src.resume();
  };
  const flush = () => {
    timer = undefined;
    const now = performance.now();
    while (queue.length > 0 && queue[0]!.due <= now + 0.5) {
      const { chunk } = queue.shift()!;
      if (dst.destroyed) return;
      dst.write(chunk, () => setTimeout(() => release(chunk.length), delayMs));
    }
    if (queue.length > 0) timer = setTimeout(flush, Math.max(0, queue[0]!.due - performance.now()));
    else if (ended) dst.end();
  };
  src.on('data', (chunk: Buffer) => {
    queue.push({ chunk, due: performance.now() + delayMs });
    inFlight += chunk.length;
    if (inFlight >= windowBytes) src.pause();
    if (timer === undefined) timer = setTimeout(flush, delayMs);
  });
  src.on('end', () => {
    ended = true;
    if (timer === undefined) flush();
  });
}

function handle(client: Socket, options: RelayOptions, sockets: Set<Socket>): void {
  sockets.add(client);
  client.setNoDelay(true);
  client.pause();
  client.on('error', () => client.destroy());
  const oneWay = options.rttMs / 2;
  setTimeout(() => {
    if (client.destroyed) return;
    const upstream = connect({ host: options.targetHost, port: options.targetPort, allowHalfOpen: true });
    sockets.add(upstream);
    upstream.setNoDelay(true);
    // A FIN travels through the delay queue like data (pipeDelayed ends the far side once its
    // queue is empty), so only an error tears both sides down at once; a plain close would cut
    // off bytes still on their way.
    const destroyBoth = () => {
      client.destroy();
      upstream.destroy();
    };
    // A side that goes away without a FIN still ends the other, once what it sent has arrived.
    const closeLater = (s: Socket, other: Socket) => () => {
      sockets.delete(s);
      setTimeout(() => other.end(), oneWay + 5);
    };
    client.on('error', destroyBoth).on('close', closeLater(client, upstream));
    upstream.on('error', destroyBoth).on('close', closeLater(upstream, client));
    upstream.once('connect', () => {
      pipeDelayed(client, upstream, oneWay, options.windowBytes);
      pipeDelayed(upstream, client, oneWay, options.windowBytes);
      client.resume();
    });
  }, options.rttMs);
}

export async function startRelay(options: RelayOptions): Promise<Relay> {
  const sockets = new Set<Socket>();
  const server: Server = createServer({ pauseOnConnect: true, allowHalfOpen: true }, (c) =>
    handle(c, options, sockets),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.listenPort, options.listenHost, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
