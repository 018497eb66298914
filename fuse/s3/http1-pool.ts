// The connections of the mount's data path: HTTP/1.1 over plain TCP (or TLS), kept alive and
// shared by up to `maxSockets` requests at a time, one request per connection. Answers are read
// by http1-response.ts straight out of the socket's read buffer.
//
// Why not undici, which this replaced: with it and its WebAssembly parser a started mount held
// 100 MB, without it 92 MB, and a bare loop of ranged GETs through it cost 0.4 CPU s/GiB against
// ~0.2 s for a socket read straight into a buffer it uses again (docs/BENCHMARKING.md,
// "What each mount costs the machine"). A plain socket here reads with Node's `onread` into one
// buffer of its own and the reader hands body bytes on as views of it, synchronously, so that the
// caller copies them out (into readahead slabs) before the buffer is read into again: a steady
// download allocates nothing per read. TLS sockets decrypt into memory of their own.
//
// Failures are errors with the codes s3-errors.ts knows: a connection refused, reset, closed
// before or inside an answer (ECONNRESET), silent for `idleTimeoutMs` while a request is on it
// (ETIMEDOUT), or an answer framed wrongly (EPROTO, never retried). A request that fails on a
// kept-alive connection before any byte of answer came back — the server closed it while idle —
// is sent once more on a new connection, as browsers and undici do, unless it is a POST: the
// server may have carried one out before the connection closed (a CompleteMultipartUpload, a
// CreateMultipartUpload), so it fails here and only the caller's retry rules, which know what a
// lost answer means for it, send it again. Every other retry is the caller's. An answer its reader paused mid-body waits on its connection, unread, until it is
// resumed or closed (Parked).

import { HttpFramingError, type ResponseEvents } from './http1-response.ts';
import { checkHeaders, Connection, netError, type PoolOptions, type PoolRequest } from './http1-connection.ts';

export type { PoolOptions, PoolRequest } from './http1-connection.ts';

/**
 * An answer whose reader paused it mid-body ('pause', see http1-response.ts): its connection waits,
 * unread, holding what it had received past the pause, until it is resumed or closed.
 */
export interface Parked {
  /** Goes on reading the body into `events`; settles as Http1Pool.request does. */
  resume(events: ResponseEvents): Promise<Parked | undefined>;
  /** Gives the answer up: its connection is closed. */
  close(): void;
}

export class Http1Pool {
  private readonly options: PoolOptions;
  private readonly idle: Connection[] = [];
  private readonly all = new Set<Connection>();
  private readonly waiting: ((c: Connection | Error) => void)[] = [];
  private closed = false;

  constructor(options: PoolOptions) {
    this.options = options;
  }

  /**
   * Sends `req`; resolves when its answer was read whole (or paused: with its handle), rejects
   * with what broke it.
   */
  async request(req: PoolRequest, events: ResponseEvents): Promise<Parked | undefined> {
    checkHeaders(req.headers);
    for (let tries = 0; ; tries++) {
      // The one resend goes on a new connection: the other idle ones are as old as the one that
      // failed, and after a failover of the store's address every one of them is dead.
      const c = tries === 0 ? await this.take() : await this.fresh();
      let sent = req;
      if (req.headersWhenSent) {
        try {
          sent = { ...req, headers: req.headersWhenSent() };
          checkHeaders(sent.headers);
        } catch (err) {
          this.put(c);
          throw err;
        }
      }
      const reused = c.served > 0;
      let started = false;
      const watched: ResponseEvents = {
        onHead: (status, headers) => {
          started = true;
          events.onHead(status, headers);
        },
        onBody: (view) => events.onBody(view),
        onInterim: () => (started = true),
      };
      try {
        await c.send(sent, watched);
      } catch (err) {
        const code = (err as { code?: string }).code;
        // A kept-alive connection the server had closed: nothing was answered, send it again —
        // unless it is not idempotent (RFC 9110 §9.2.2), which only the caller may resend.
        const resend =
          reused && !started && tries === 0 && req.method !== 'POST' && code !== 'ETIMEDOUT' && !(err instanceof HttpFramingError);
        // Its slot goes to the resend, not to a request waiting for one.
        if (resend) c.handedOn = true;
        this.put(c);
        if (resend) continue;
        throw err;
      }
      if (c.parked) return this.parked(c);
      this.put(c);
      return undefined;
    }
  }

  /** A paused answer's handle: the connection comes back to the pool once the answer is over. */
  private parked(c: Connection): Parked {
    const handle: Parked = {
      resume: async (events) => {
        try {
          await c.resume(events);
        } catch (err) {
          this.put(c);
          throw err;
        }
        if (c.parked) return handle;
        this.put(c);
        return undefined;
      },
      close: () => c.close(),
    };
    return handle;
  }

  /** Closes every connection; requests under way fail with ECONNRESET. */
  close(): void {
    this.closed = true;
    for (const c of [...this.all]) c.close();
    for (const w of this.waiting.splice(0)) w(netError('data path closed', 'ECONNRESET'));
  }

  private take(): Promise<Connection> {
    if (this.closed) return Promise.reject(netError('data path closed', 'ECONNRESET'));
    const c = this.idle.pop();
    if (c) return Promise.resolve(c);
    if (this.all.size < this.options.maxSockets) return this.connect();
    return new Promise((resolve, reject) => {
      this.waiting.push((got) => (got instanceof Error ? reject(got) : resolve(got)));
    });
  }

  /** A new connection outside the count: it takes the slot of one that failed (`handedOn`). */
  private fresh(): Promise<Connection> {
    if (this.closed) return Promise.reject(netError('data path closed', 'ECONNRESET'));
    return this.connect();
  }

  private connect(): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const c = new Connection(this.options, (gone) => this.forget(gone), (err) => (err ? reject(err) : resolve(c)));
      this.all.add(c);
    });
  }

  /** A connection whose request is over: to the next waiting request, or idle in the pool. */
  private put(c: Connection): void {
    if (c.dead || this.closed) {
      c.close();
      return;
    }
    const next = this.waiting.shift();
    if (next) return next(c);
    c.idle();
    this.idle.push(c);
  }

  private forget(c: Connection): void {
    const i = this.idle.indexOf(c);
    if (i >= 0) this.idle.splice(i, 1);
    this.all.delete(c);
    if (c.handedOn) return;
    // A slot is free: the next waiting request opens a connection of its own.
    const next = this.waiting.shift();
    if (next && !this.closed) this.connect().then(next, next);
  }
}
