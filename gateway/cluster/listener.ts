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
/** How long a connection waits for a worker before it is answered 503 (a replacement starts in a second or two). */
const MAX_WAIT_MS = 30_000;

export const HAND_OVER = 'conn';
/** A worker's word that it holds a handed-over connection; until then the primary keeps its copy. */
export const HAND_OVER_ACK = 'conn-got';

const NO_WORKER =
  'HTTP/1.1 503 Service Unavailable\r\nProxy-Status: estuary; error=proxy_internal_error; details="no gateway worker"\r\n' +
  'Retry-After: 5\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 38\r\nConnection: close\r\n\r\n' +
  'no gateway worker came up; try again\r\n';

interface Waiting {
  readonly socket: Socket;
  readonly since: number;
}

export class Listener {
  readonly #server: Server;
  readonly #ready: Worker[] = [];
  readonly #waiting: Waiting[] = [];
  /** Sent connections a worker has not confirmed yet, by hand-over id: a worker that dies first loses none. */
  readonly #unconfirmed = new Map<number, { socket: Socket; worker: Worker; since: number }>();
  readonly #watched = new WeakSet<Worker>();
  #next = 0;
  #ids = 0;
  #timer?: NodeJS.Timeout;

  constructor() {
    // Paused: the bytes a client sends are read by the worker that gets its connection.
    this.#server = createServer({ pauseOnConnect: true }, (socket) => this.#take(socket, Date.now()));
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
    this.#watch(worker);
    this.#ready.push(worker);
    for (const w of this.#waiting.splice(0)) this.#take(w.socket, w.since);
  }

  /** A worker that is gone: connections it had not confirmed go to another one (or wait). */
  gone(worker: Worker): void {
    const i = this.#ready.indexOf(worker);
    if (i >= 0) this.#ready.splice(i, 1);
    for (const [id, u] of this.#unconfirmed) {
      if (u.worker !== worker) continue;
      this.#unconfirmed.delete(id);
      this.#take(u.socket, u.since);
    }
  }

  /** Stops accepting; connections still waiting for a worker are closed. */
  close(): void {
    this.#server.close();
    clearInterval(this.#timer);
    for (const w of this.#waiting.splice(0)) w.socket.destroy();
  }

  #watch(worker: Worker): void {
    if (this.#watched.has(worker)) return;
    this.#watched.add(worker);
    worker.on('message', (m: { t?: unknown; id?: unknown } | null) => {
      if (m?.t !== HAND_OVER_ACK || typeof m.id !== 'number') return;
      const u = this.#unconfirmed.get(m.id);
      this.#unconfirmed.delete(m.id);
      // Closes the primary's descriptor only; the worker's copy keeps the connection.
      u?.socket.destroy();
    });
    // 'disconnect' comes first when the channel breaks; 'exit' covers a worker killed outright.
    worker.once('disconnect', () => this.gone(worker));
    worker.once('exit', () => this.gone(worker));
  }

  #take(socket: Socket, since: number): void {
    socket.on('error', () => undefined);
    if (socket.destroyed) return;
    const worker = this.#pick();
    if (!worker) return this.#wait(socket, since);
    const id = ++this.#ids;
    this.#unconfirmed.set(id, { socket, worker, since: Date.now() });
    this.#tick();
    // keepOpen: the primary's copy stays open until the worker confirms, so a worker that dies
    // with the connection still in its channel does not take it along.
    worker.send({ t: HAND_OVER, id }, socket, { keepOpen: true }, (err: Error | null) => {
      if (!err) return;
      if (!this.#unconfirmed.delete(id)) return;
      this.gone(worker);
      this.#take(socket, since);
    });
  }

  #wait(socket: Socket, since: number): void {
    if (this.#waiting.length >= MAX_WAITING) {
      socket.destroy();
      return;
    }
    this.#waiting.push({ socket, since });
    this.#tick();
  }

  #tick(): void {
    this.#timer ??= setInterval(() => this.#expire(), 1000).unref();
  }

  /**
   * Connections that waited too long for a worker are told so instead of hanging. So are those
   * a worker never confirmed: it could not take the descriptor (its open-files limit), since a
   * worker that gets one confirms at once.
   */
  #expire(): void {
    const now = Date.now();
    while (this.#waiting.length > 0 && now - this.#waiting[0]!.since > MAX_WAIT_MS) {
      this.#waiting.shift()!.socket.end(NO_WORKER);
    }
    for (const [id, u] of this.#unconfirmed) {
      if (now - u.since <= MAX_WAIT_MS) break;
      this.#unconfirmed.delete(id);
      u.socket.end(NO_WORKER);
    }
    if (this.#waiting.length === 0 && this.#unconfirmed.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  #pick(): Worker | undefined {
    while (this.#ready.length > 0) {
      const w = this.#ready[this.#next++ % this.#ready.length]!;
      if (w.isConnected() && !w.isDead()) return w;
      this.gone(w);
    }
    return undefined;
  }
}
