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

import { isIP, connect as tcpConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { HttpFramingError, lineEndsOnly, type ResponseEvents, ResponseReader } from './http1-response.ts';

/** A stray CRLF or two after an answer is tolerated (see bytes()); a stream of them is not. */
const MAX_STRAY_LINE_ENDS = 16;
/** One socket read at most; S3 servers write their bodies in pieces of 16–64 KiB. */
const READ_SIZE = 128 * 1024;
/**
 * An idle connection is closed after this long unless the server names a shorter time: Node's
 * HTTP servers (s3rver) close theirs after 5 s, and a request sent as they do fails.
 */
const KEEP_ALIVE_MS = 4000;

export interface PoolOptions {
  readonly url: URL;
  readonly maxSockets: number;
  readonly connectTimeoutMs: number;
  /** A connection that sends and receives nothing this long while a request is on it is dead. */
  readonly idleTimeoutMs: number;
}

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

export interface PoolRequest {
  readonly method: string;
  /** Path and query, already encoded. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: Buffer;
  /**
   * The headers to send instead of `headers`, made once the request has its connection: a
   * signature made before a wait behind busy connections would be as old as the wait.
   */
  readonly headersWhenSent?: () => Readonly<Record<string, string>>;
}

/** A line break or a character beyond Latin-1 in a header would end it early or be mangled. */
function checkHeaders(headers: Readonly<Record<string, string>>): void {
  for (const [name, value] of Object.entries(headers))
    if (!/^[!#-'*+.^-z|~0-9A-Za-z-]+$/.test(name) || !/^[\t\x20-\x7e\x80-\xff]*$/.test(value))
      throw netError(`request header ${JSON.stringify(name)} holds a character HTTP cannot carry`, 'EINVAL');
}

function netError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

/** One connection and the exchange on it, if any. */
class Connection {
  readonly socket: Socket;
  private reader: ResponseReader | undefined;
  private settle: ((err?: Error) => void) | undefined;
  /** Answers fully read on this connection: a failure before the first is not a stale reuse. */
  served = 0;
  dead = false;
  private idleTimer: NodeJS.Timeout | undefined;
  keepAliveMs = KEEP_ALIVE_MS;

  private readonly options: PoolOptions;
  private readonly onGone: (c: Connection) => void;

  constructor(options: PoolOptions, onGone: (c: Connection) => void, ready: (err?: Error) => void) {
    this.options = options;
    this.onGone = onGone;
    const { url } = options;
    const secure = url.protocol === 'https:';
    const port = Number(url.port || (secure ? 443 : 80));
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (secure) {
      // SNI carries host names only (RFC 6066): an address as the endpoint sends none.
      const servername = isIP(host) ? undefined : host;
      this.socket = tlsConnect({ host, port, servername, ALPNProtocols: ['http/1.1'] });
      this.socket.on('data', (chunk: Buffer) => this.bytes(chunk, chunk.length));
    } else {
      const buffer = Buffer.allocUnsafeSlow(READ_SIZE);
      this.socket = tcpConnect({
        host,
        port,
        noDelay: true,
        onread: { buffer, callback: (n: number, buf: Uint8Array) => this.bytes(buf as Buffer, n) },
      });
    }
    this.socket.setNoDelay(true).setKeepAlive(true);
    const timer = setTimeout(
      () => this.socket.destroy(netError(`connect to ${url.host}: no answer in time`, 'ETIMEDOUT')),
      options.connectTimeoutMs,
    );
    let connected = false;
    this.socket.once(secure ? 'secureConnect' : 'connect', () => {
      connected = true;
      clearTimeout(timer);
      ready();
    });
    this.socket.on('timeout', () => this.socket.destroy(netError(`${url.host}: no byte sent or received in time`, 'ETIMEDOUT')));
    this.socket.on('error', (err) => {
      clearTimeout(timer);
      if (!connected) ready(err);
      this.gone(err);
    });
    this.socket.on('end', () => this.gone());
    this.socket.on('close', () => {
      clearTimeout(timer);
      if (!connected) ready(netError(`connect to ${url.host}: closed`, 'ECONNRESET'));
      this.gone();
    });
  }

  /** Sends one request; `events` get its answer; resolves once the answer was read whole. */
  send(req: PoolRequest, events: ResponseEvents): Promise<void> {
    clearTimeout(this.idleTimer);
    return new Promise((resolve, reject) => {
      this.reader = new ResponseReader(events, req.method === 'HEAD');
      this.settle = (err) => {
        this.settle = undefined;
        if (!this.reader?.paused) this.reader = undefined;
        if (err) reject(err);
        else resolve();
      };
      this.socket.setTimeout(this.options.idleTimeoutMs);
      let head = `${req.method} ${req.path} HTTP/1.1\r\nhost: ${this.options.url.host}\r\n`;
      for (const [name, value] of Object.entries(req.headers)) head += `${name}: ${value}\r\n`;
      if (req.body) head += `content-length: ${req.body.length}\r\n`;
      this.socket.cork();
      this.socket.write(`${head}\r\n`, 'latin1');
      if (req.body && req.body.length > 0) this.socket.write(req.body);
      this.socket.uncork();
    });
  }

  /** Bytes received past where the reader paused, kept for resume(). */
  private leftover: Buffer | undefined;

  /** True while the answer on this connection is paused mid-body. */
  get parked(): boolean {
    return this.reader?.paused === true && !this.removed;
  }

  /** Goes on with a paused answer (see Parked.resume). */
  resume(events: ResponseEvents): Promise<void> {
    const reader = this.reader;
    if (!reader?.paused || this.removed)
      return Promise.reject(netError(`connection to ${this.options.url.host} closed inside an answer`, 'ECONNRESET'));
    return new Promise((resolve, reject) => {
      this.settle = (err) => {
        this.settle = undefined;
        if (!this.reader?.paused) this.reader = undefined;
        if (err) reject(err);
        else resolve();
      };
      this.socket.setTimeout(this.options.idleTimeoutMs);
      reader.resume(events);
      const left = this.leftover;
      this.leftover = undefined;
      if (!left || this.bytes(left, left.length)) this.socket.resume();
    });
  }

  /** Where a read lands (its first `n` bytes); never throws into the socket. */
  private bytes(buf: Buffer, n: number): boolean {
    const reader = this.reader;
    if (this.leftover) {
      // A read that was under way when the answer paused.
      this.leftover = Buffer.concat([this.leftover, buf.subarray(0, n)]);
      return false;
    }
    if (!reader) {
      // Empty lines between answers are skipped (RFC 9112 §2.2); other bytes nobody asked for,
      // whatever they are, mean this connection cannot be trusted again.
      if (lineEndsOnly(buf, 0, n) && n <= MAX_STRAY_LINE_ENDS) return true;
      this.socket.destroy();
      return false;
    }
    let ended: number;
    try {
      ended = reader.feed(buf, 0, n);
    } catch (err) {
      this.socket.destroy();
      this.finish(err as Error);
      return false;
    }
    if (reader.paused) {
      // Waits unread: the socket's buffer is read into again, so what came past the pause is kept.
      this.leftover = Buffer.from(buf.subarray(ended, n));
      this.socket.pause();
      this.socket.setTimeout(0);
      this.settle?.();
      return false;
    }
    if (!reader.done) return true;
    if (reader.cut) {
      // The caller has its bytes; the rest of the body is not worth reading (a server that
      // ignored Range sends all of the object): closing costs a new connection, draining it the
      // object's size.
      this.socket.destroy();
      this.finish();
      return false;
    }
    if (ended < n && !(lineEndsOnly(buf, ended, n) && n - ended <= MAX_STRAY_LINE_ENDS)) {
      this.socket.destroy();
      this.finish(new HttpFramingError(`${n - ended} bytes after the end of the answer`));
      return false;
    }
    this.served++;
    if (!reader.keepAlive) this.socket.end();
    else if (reader.keepAliveSeconds !== undefined)
      this.keepAliveMs = Math.min(KEEP_ALIVE_MS, reader.keepAliveSeconds * 1000 - 1000);
    if (!reader.keepAlive || this.keepAliveMs <= 0 || this.socket.writableLength > 0) this.dead = true;
    this.finish();
    return true;
  }

  private finish(err?: Error): void {
    if (err || this.reader?.cut) this.dead = true;
    this.socket.setTimeout(0);
    this.settle?.(err);
  }

  /**
   * The connection ended, broke or was closed: an answer on it ends (framed by the close) or fails.
   * Only a clean close ends a body framed by the close; a reset or any other socket error mid-body
   * fails the answer, or the bytes before it would pass for the whole object.
   */
  private gone(err?: Error): void {
    if (!err && this.reader?.end()) {
      this.served++;
      this.finish();
    }
    if (this.settle) {
      const what = this.reader?.started ? 'inside an answer' : 'before an answer';
      const code = (err as { code?: string } | undefined)?.code ?? 'ECONNRESET';
      this.finish(netError(`connection to ${this.options.url.host} closed ${what}${err ? `: ${err.message}` : ''}`, code));
    }
    if (this.removed) return;
    this.removed = true;
    this.dead = true;
    clearTimeout(this.idleTimer);
    this.onGone(this);
  }

  private removed = false;
  /** Its slot in the pool went to the request that failed on it (see Http1Pool.request). */
  handedOn = false;

  /** Waits idle in the pool; closes after the keep-alive time. */
  idle(): void {
    this.idleTimer = setTimeout(() => this.socket.destroy(), this.keepAliveMs);
    this.idleTimer.unref();
  }

  close(): void {
    clearTimeout(this.idleTimer);
    this.socket.destroy();
  }
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
