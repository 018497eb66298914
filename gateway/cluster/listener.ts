// The gateway's listening socket, held by the primary. It accepts every connection and hands it
// to a worker (round robin, as node:cluster would), over the worker's IPC channel. Holding the
// socket here is what lets a worker die without the service going deaf: node:cluster closes a
// shared socket when its last worker is gone, so with one worker every crash meant refused (or
// accepted and never answered) connections until the replacement listened again. Here a
// connection that arrives while no worker is ready waits, unread, for the next one.

import type { Worker } from 'node:cluster';
import { createServer, type Server, type Socket } from 'node:net';

/** Connections that may wait for a worker; beyond this they are closed (a worker that never comes is a crash loop, which ends the service anyway). */
const MAX_WAITING = 10_000;

export const HAND_OVER = 'conn';

export class Listener {
  readonly #server: Server;
  readonly #ready: Worker[] = [];
  readonly #waiting: Socket[] = [];
  #next = 0;

  constructor() {
    // Paused: the bytes a client sends are read by the worker that gets its connection.
    this.#server = createServer({ pauseOnConnect: true }, (socket) => this.#take(socket));
  }

  /** Listens; resolves with the port, rejects with the error's code (EADDRINUSE, EACCES…). */
  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', (err: NodeJS.ErrnoException) => reject(err));
      this.#server.listen({ host, port }, () => resolve((this.#server.address() as { port: number }).port));
    });
  }

  /** A worker that can take connections now; the ones waiting go to it first. */
  ready(worker: Worker): void {
    this.#ready.push(worker);
    for (const socket of this.#waiting.splice(0)) this.#take(socket);
  }

  gone(worker: Worker): void {
    const i = this.#ready.indexOf(worker);
    if (i >= 0) this.#ready.splice(i, 1);
  }

  /** Stops accepting; connections still waiting for a worker are closed. */
  close(): void {
    this.#server.close();
    for (const socket of this.#waiting.splice(0)) socket.destroy();
  }

  #take(socket: Socket): void {
    socket.on('error', () => undefined);
    if (socket.destroyed) return;
    const worker = this.#pick();
    if (!worker) {
      if (this.#waiting.length < MAX_WAITING) this.#waiting.push(socket);
      else socket.destroy();
      return;
    }
    // A worker that is gone before the primary heard of it: the connection goes to another one
    // (or waits). One that dies with the connection in its channel loses it; that client retries.
    worker.send({ t: HAND_OVER }, socket, (err: Error | null) => {
      if (!err) return;
      this.gone(worker);
      if (socket.destroyed) return;
      this.#take(socket);
    });
  }

  #pick(): Worker | undefined {
    while (this.#ready.length > 0) {
      const w = this.#ready[this.#next++ % this.#ready.length]!;
      if (w.isConnected()) return w;
      this.gone(w);
    }
    return undefined;
  }
}
