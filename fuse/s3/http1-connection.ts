// One kept-alive HTTP/1.1 connection of the mount's data path and the exchange on it: what
// http1-pool.ts shares out, one request at a time. Answers are read by http1-response.ts straight
// out of the socket's read buffer.

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
export function checkHeaders(headers: Readonly<Record<string, string>>): void {
  for (const [name, value] of Object.entries(headers))
    if (!/^[!#-'*+.^-z|~0-9A-Za-z-]+$/.test(name) || !/^[\t\x20-\x7e\x80-\xff]*$/.test(value))
      throw netError(`request header ${JSON.stringify(name)} holds a character HTTP cannot carry`, 'EINVAL');
}

export function netError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

/** One connection and the exchange on it, if any. */
export class Connection {
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
    this.reader = new ResponseReader(events, req.method === 'HEAD');
    return this.answer(() => {
      let head = `${req.method} ${req.path} HTTP/1.1\r\nhost: ${this.options.url.host}\r\n`;
      for (const [name, value] of Object.entries(req.headers)) head += `${name}: ${value}\r\n`;
      if (req.body) head += `content-length: ${req.body.length}\r\n`;
      this.socket.cork();
      this.socket.write(`${head}\r\n`, 'latin1');
      if (req.body && req.body.length > 0) this.socket.write(req.body);
      this.socket.uncork();
    });
  }

  /** Resolves once the reader has the answer whole (or paused), after `start` sends or resumes it. */
  private answer(start: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.settle = (err) => {
        this.settle = undefined;
        if (!this.reader?.paused) this.reader = undefined;
        if (err) reject(err);
        else resolve();
      };
      this.socket.setTimeout(this.options.idleTimeoutMs);
      start();
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
    return this.answer(() => {
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
