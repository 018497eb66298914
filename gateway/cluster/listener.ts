// The gateway's listening socket, held by the primary. It accepts every connection and hands it
// to a worker (round robin, as node:cluster would), over the worker's IPC channel. Holding the
// socket here is what lets a worker die without the service going deaf: node:cluster closes a
// shared socket when its last worker is gone, so with one worker every crash meant refused (or
// accepted and never answered) connections until the replacement listened again. Here a
// connection that arrives while no worker is ready waits, unread, for the next one. A worker that
// does not confirm a hand-over within STALL_MS (frozen, or its event loop stuck) is passed over:
// the connection goes to another worker, and it gets no new ones until it answers again.

import type { Worker } from 'node:cluster';
import { createServer, type Server, type Socket } from 'node:net';

/** Connections that may wait for a worker; beyond this they are closed (a worker that never comes is a crash loop, which ends the service anyway). */
const MAX_WAITING = 10_000;
/** How long a connection waits for a worker before it is answered 503 (a replacement starts in a second or two). */
const MAX_WAIT_MS = 30_000;

/**
 * A worker confirms a hand-over as soon as its event loop turns (milliseconds, also under load);
 * one silent for 2 s is stuck, and the connection is better served by another worker: a
 * Prometheus scrape (10 s timeout) still gets its answer after the 5 s the gathering may take.
 */
export const STALL_MS = 2000;
/**
 * A worker serves a hand-over at once only if it reads it within this time of its sending; later,
 * the primary may already have given the connection to another worker, so it asks first
 * (HAND_OVER_LATE) and serves it only if the primary says it is still its own. The second between
 * this and STALL_MS lets a confirmation sent at once reach the primary before it passes a worker
 * over.
 */
export const HAND_OVER_FRESH_MS = STALL_MS / 2;

export const HAND_OVER = 'conn';
/** A worker's word that it holds a handed-over connection; until then the primary keeps its copy. */
export const HAND_OVER_ACK = 'conn-got';
/** A worker's word that it read a hand-over late: it serves it only on the primary's verdict. */
export const HAND_OVER_LATE = 'conn-late';
/** The primary's answer to HAND_OVER_LATE: `keep` when the connection was not given to another worker. */
export const HAND_OVER_VERDICT = 'conn-verdict';

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
  readonly #unconfirmed = new Map<number, { socket: Socket; worker: Worker; since: number; sent: number }>();
  readonly #watched = new WeakSet<Worker>();
  /**
   * Workers that left a hand-over unconfirmed for STALL_MS and have not answered one since, with
   * when: after MAX_WAIT_MS one is tried again (a worker that never answers, say one that cannot
   * take descriptors, must not be shut out for good).
   */
  readonly #stalled = new Map<Worker, number>();
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
    this.#stalled.delete(worker);
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
      if ((m?.t !== HAND_OVER_ACK && m?.t !== HAND_OVER_LATE) || typeof m.id !== 'number') return;
      if (this.#stalled.delete(worker)) for (const w of this.#waiting.splice(0)) this.#take(w.socket, w.since);
      // Still listed under this id: not given to another worker, so it stays with this one.
      const u = this.#unconfirmed.get(m.id);
      this.#unconfirmed.delete(m.id);
      if (m.t === HAND_OVER_LATE) {
        if (u && !worker.isConnected()) return this.#take(u.socket, u.since, worker);
        if (worker.isConnected()) worker.send({ t: HAND_OVER_VERDICT, id: m.id, keep: u !== undefined });
      }
      // Closes the primary's descriptor only; the worker's copy keeps the connection.
      u?.socket.destroy();
    });
    // 'disconnect' comes first when the channel breaks; 'exit' covers a worker killed outright.
    worker.once('disconnect', () => this.gone(worker));
    worker.once('exit', () => this.gone(worker));
  }

  /** Hands `socket` to a ready worker (another than `avoid` if there is one), or keeps it waiting. */
  #take(socket: Socket, since: number, avoid?: Worker): void {
    if (socket.listenerCount('error') === 0) socket.on('error', () => undefined);
    if (socket.destroyed) return;
    const worker = this.#pick(avoid);
    if (!worker) return this.#wait(socket, since);
    const id = ++this.#ids;
    const sent = Date.now();
    this.#unconfirmed.set(id, { socket, worker, since, sent });
    this.#tick();
    // keepOpen: the primary's copy stays open until the worker confirms, so a worker that dies
    // with the connection still in its channel does not take it along.
    worker.send({ t: HAND_OVER, id, at: sent }, socket, { keepOpen: true }, (err: Error | null) => {
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
    // From the timers phase to the check phase: the poll phase between them reads the
    // confirmations already sent, so a worker that answered in time is not passed over.
    this.#timer ??= setInterval(() => setImmediate(() => this.#expire()), STALL_MS / 8).unref();
  }

  /**
   * Connections that waited too long for a worker are told so instead of hanging. One a worker
   * has not confirmed within STALL_MS (frozen, stuck, or unable to take the descriptor at its
   * open-files limit) goes to another worker if there is one, else it is told so too in the end.
   */
  #expire(): void {
    const now = Date.now();
    while (this.#waiting.length > 0 && now - this.#waiting[0]!.since > MAX_WAIT_MS) {
      this.#waiting.shift()!.socket.end(NO_WORKER);
    }
    for (const [id, u] of this.#unconfirmed) {
      // Until then the worker may still take it at once; after, it asks first (HAND_OVER_LATE).
      if (now - u.sent <= STALL_MS) continue;
      if (!this.#stalled.has(u.worker)) this.#stalled.set(u.worker, now);
      if (now - u.since > MAX_WAIT_MS) {
        this.#unconfirmed.delete(id);
        u.socket.end(NO_WORKER);
      } else if (this.#pick(u.worker) !== undefined) {
        this.#unconfirmed.delete(id);
        this.#take(u.socket, u.since, u.worker);
      }
    }
    // Those waiting because every worker was stalled go to one that may have come back.
    for (const w of this.#waiting.splice(0)) this.#take(w.socket, w.since);
    if (this.#waiting.length === 0 && this.#unconfirmed.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  /** The next ready worker in turn, passing over stalled ones, and `avoid` unless it is the only one. */
  #pick(avoid?: Worker): Worker | undefined {
    for (const w of [...this.#ready]) if (!w.isConnected() || w.isDead()) this.gone(w);
    for (const [w, at] of this.#stalled) if (Date.now() - at > MAX_WAIT_MS || w.isDead()) this.#stalled.delete(w);
    const n = this.#ready.length;
    for (let i = 0; i < n; i++) {
      const w = this.#ready[this.#next++ % n]!;
      if (w !== avoid && !this.#stalled.has(w)) return w;
    }
    return avoid && this.#ready.includes(avoid) && !this.#stalled.has(avoid) ? avoid : undefined;
  }
}
