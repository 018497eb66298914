// An HTTP/1.1 response reader for the mount's data path (http1-pool.ts): the status line, the
// headers, and the body as the framing says — Content-Length, chunked, or (neither) up to the
// connection's end. Pure: bytes in, callbacks out, no I/O; the pool feeds it each socket read.
//
// Interim answers (1xx: 100 Continue, 102 Processing, 103 Early Hints from a CDN or proxy in
// front of the store) are skipped, as RFC 9110 §15.2 requires of every client, even one that asked
// for none; 101 Switching Protocols is not interim here (nothing asked to switch) but an error.
//
// Strict, because a body that is framed wrongly must never become file data: a 101, a
// Transfer-Encoding other than chunked, one sent together with a Content-Length, Content-Lengths
// that disagree, a chunk not followed by CRLF and a folded or malformed header line are all
// errors. A body cut short is the caller's to detect (`end()` says whether the answer was
// complete); bytes after the answer are returned, not eaten. A caller that has all it wants of a
// body says so (`onBody` returns 'enough'): the answer ends there, and the connection with it; or
// it stops reading it for now ('pause': `feed` returns where it stopped, `resume` goes on).

/** A response the reader refused: the connection is unusable, the request failed. */
export class HttpFramingError extends Error {
  readonly code = 'EPROTO';

  constructor(message: string) {
    super(`malformed HTTP answer: ${message}`);
    this.name = 'HttpFramingError';
  }
}

/** Whether `buf[from, to)` holds only CR and LF: empty lines a reader skips between answers. */
export function lineEndsOnly(buf: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (buf[i] !== 13 && buf[i] !== 10) return false;
  return true;
}

export type ResponseHeaders = Record<string, string | string[]>;

export interface ResponseEvents {
  /** Status and headers (names lower-case); throwing refuses the body. */
  onHead(status: number, headers: ResponseHeaders): void;
  /**
   * A piece of the body: a view of the socket's buffer, valid only during the call. Returning
   * 'enough' ends the answer here, the rest unread: its connection cannot carry another request
   * (see `cut`); 'pause' stops reading after this piece until `resume`.
   */
  onBody(view: Buffer): unknown;
  /** An interim (1xx) answer was skipped: the server has the request. */
  onInterim?(status: number): void;
}

/** Headers beyond this (interim answers' included) are not an S3 answer. */
const MAX_HEAD = 64 * 1024;
/** A chunk-size line with extensions; more is not an answer either. */
const MAX_SIZE_LINE = 4096;

type State = 'head' | 'length' | 'size-line' | 'data' | 'data-crlf' | 'trailers' | 'to-close' | 'done';

const CR = 13;
const LF = 10;
const HEAD_END = Buffer.from('\r\n\r\n');

export class ResponseReader {
  private state: State = 'head';
  /** Head (or size line, or trailers) bytes seen so far when they span reads. */
  private pending = '';
  /** Bytes of interim answers' heads skipped so far: they count towards MAX_HEAD. */
  private interimBytes = 0;
  /** True when the caller ended the answer before its body did ('enough'). */
  cut = false;
  /** Body bytes still due: the Content-Length left, or the current chunk's. */
  private left = 0;
  /** True when the answer lets the connection carry another request. */
  keepAlive = true;
  /** Seconds the server keeps an idle connection (Keep-Alive: timeout=N), when it says. */
  keepAliveSeconds: number | undefined;
  status = 0;
  /** True after onBody said 'pause', until resume(). */
  paused = false;
  private events: ResponseEvents;

  /** An answer to HEAD: its headers describe a body it does not carry. */
  private readonly headOnly: boolean;

  constructor(events: ResponseEvents, headOnly = false) {
    this.events = events;
    this.headOnly = headOnly;
  }

  get done(): boolean {
    return this.state === 'done';
  }

  /** True once the head was read: the server answered. */
  get started(): boolean {
    return this.state !== 'head';
  }

  /**
   * Reads `buf[from, to)`; returns where the answer ended inside it (`to` when it has not ended
   * yet, or ended exactly there). Throws HttpFramingError, or what a callback threw.
   */
  feed(buf: Buffer, from: number, to: number): number {
    let at = from;
    while (at < to && this.state !== 'done' && !this.paused) {
      switch (this.state) {
        case 'head':
          at = this.readHead(buf, at, to);
          break;
        case 'length':
        case 'data': {
          const n = Math.min(this.left, to - at);
          this.left -= n;
          const view = buf.subarray(at, at + n);
          at += n;
          if (this.left === 0) this.state = this.state === 'length' ? 'done' : 'data-crlf';
          this.said(this.events.onBody(view));
          break;
        }
        case 'to-close':
          this.said(this.events.onBody(buf.subarray(at, to)));
          at = to;
          break;
        case 'size-line':
        case 'data-crlf':
        case 'trailers':
          at = this.readLine(buf, at, to);
          break;
      }
    }
    return at;
  }

  /** What onBody answered: 'enough' (the rest of the body is never read) or 'pause'. */
  private said(what: unknown): void {
    if (this.state === 'done') return;
    if (what === 'pause') this.paused = true;
    if (what !== 'enough') return;
    this.state = 'done';
    this.cut = true;
    this.keepAlive = false;
  }

  /** Goes on after a 'pause', with the body's next pieces to `events`. */
  resume(events: ResponseEvents): void {
    this.events = events;
    this.paused = false;
  }

  /** The connection ended: true when that completes the answer (a body framed by the close). */
  end(): boolean {
    if (this.state === 'to-close') this.state = 'done';
    return this.state === 'done';
  }

  private readHead(buf: Buffer, from: number, to: number): number {
    if (this.pending === '') {
      // Empty lines before the status line (a server's stray CRLF after its previous answer) are
      // ignored, as RFC 9112 §2.2 asks and Node's client does; they count towards MAX_HEAD.
      const start = from;
      while (from < to && (buf[from] === CR || buf[from] === LF)) from++;
      this.interimBytes += from - start;
      if (this.interimBytes > MAX_HEAD) throw new HttpFramingError(`headers longer than ${MAX_HEAD} bytes`);
      if (from === to) return to;
    }
    // Only the head becomes a string: the body bytes read with it (up to a whole socket read) made
    // a string of their own per answer, and header values sliced from it kept it alive.
    const blankAt = buf.indexOf(HEAD_END, from);
    const text = buf.toString('latin1', from, blankAt >= 0 && blankAt + 4 <= to ? blankAt + 4 : to);
    const whole = this.pending + text;
    const blank = whole.indexOf('\r\n\r\n');
    if (blank < 0) {
      if (this.interimBytes + whole.length > MAX_HEAD) throw new HttpFramingError(`headers longer than ${MAX_HEAD} bytes`);
      this.pending = whole;
      return to;
    }
    const used = blank + 4 - this.pending.length;
    this.pending = '';
    this.parseHead(whole.slice(0, blank));
    return from + used;
  }

  private parseHead(head: string): void {
    const lines = head.split('\r\n');
    const m = /^HTTP\/1\.([01]) (\d{3})(?: .*)?$/.exec(lines[0]!);
    if (!m) throw new HttpFramingError(`status line ${JSON.stringify(lines[0]!.slice(0, 80))}`);
    const status = Number(m[2]);
    if (status >= 100 && status < 200 && status !== 101) {
      // Interim: the final answer follows on the same connection.
      this.interimBytes += head.length + 4;
      if (this.interimBytes > MAX_HEAD) throw new HttpFramingError(`interim answers longer than ${MAX_HEAD} bytes`);
      this.events.onInterim?.(status);
      return;
    }
    if (status < 200) throw new HttpFramingError(`a ${status} answer to a request that asked for no protocol switch`);
    const headers: ResponseHeaders = {};
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(':');
      if (colon <= 0 || /[\s]/.test(line[0]!) || /\s/.test(line[colon - 1]!))
        throw new HttpFramingError(`header line ${JSON.stringify(line.slice(0, 80))}`);
      const name = line.slice(0, colon).toLowerCase();
      const value = line.slice(colon + 1).trim();
      const had = headers[name];
      headers[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
    }
    this.status = status;
    const connection = String(headers.connection ?? '').toLowerCase();
    this.keepAlive = m[1] === '1' ? !/\bclose\b/.test(connection) : /\bkeep-alive\b/.test(connection);
    const timeout = /\btimeout=(\d+)/.exec(String(headers['keep-alive'] ?? ''));
    if (timeout) this.keepAliveSeconds = Number(timeout[1]);
    this.frame(status, headers);
    this.events.onHead(status, headers);
  }

  /** Which of the framings the headers choose, refusing the ambiguous ones. */
  private frame(status: number, headers: ResponseHeaders): void {
    const te = headers['transfer-encoding'];
    const cl = headers['content-length'];
    if (this.headOnly || status === 204 || status === 304) {
      this.state = 'done';
      return;
    }
    if (te !== undefined) {
      if (cl !== undefined) throw new HttpFramingError('both Transfer-Encoding and Content-Length');
      if (Array.isArray(te) || te.toLowerCase() !== 'chunked')
        throw new HttpFramingError(`Transfer-Encoding ${JSON.stringify(te)}`);
      this.state = 'size-line';
      return;
    }
    if (cl !== undefined) {
      const values = (Array.isArray(cl) ? cl : [cl]).flatMap((v) => v.split(',').map((s) => s.trim()));
      if (!values.every((v) => /^\d{1,15}$/.test(v) && v === values[0]))
        throw new HttpFramingError(`Content-Length ${JSON.stringify(cl)}`);
      this.left = Number(values[0]);
      this.state = this.left === 0 ? 'done' : 'length';
      return;
    }
    this.keepAlive = false;
    this.state = 'to-close';
  }

  /** A CRLF-terminated line of the chunked framing: a chunk size, the CRLF after data, a trailer. */
  private readLine(buf: Buffer, from: number, to: number): number {
    let at = from;
    // The common case, a whole line inside this read, without building strings byte by byte.
    const lf = buf.indexOf(LF, at);
    const end = lf < 0 || lf >= to ? to : lf + 1;
    this.pending += buf.toString('latin1', at, end);
    at = end;
    if (this.pending.length > MAX_SIZE_LINE) throw new HttpFramingError('chunk-size line too long');
    if (!this.pending.endsWith('\n')) {
      if (this.state === 'data-crlf' && !'\r'.startsWith(this.pending))
        throw new HttpFramingError('chunk data not followed by CRLF');
      return at;
    }
    const line = this.pending;
    this.pending = '';
    if (line.length < 2 || line.charCodeAt(line.length - 2) !== CR) throw new HttpFramingError('bare LF');
    const text = line.slice(0, -2);
    if (this.state === 'data-crlf') {
      if (text !== '') throw new HttpFramingError('chunk data not followed by CRLF');
      this.state = 'size-line';
    } else if (this.state === 'size-line') {
      const m = /^([0-9a-fA-F]{1,12})[ \t]*(;.*)?$/.exec(text);
      if (!m) throw new HttpFramingError(`chunk size ${JSON.stringify(text.slice(0, 40))}`);
      this.left = parseInt(m[1]!, 16);
      this.state = this.left === 0 ? 'trailers' : 'data';
    } else if (text === '') {
      this.state = 'done';
    } else if (text.indexOf(':') <= 0) {
      throw new HttpFramingError(`trailer line ${JSON.stringify(text.slice(0, 80))}`);
    }
    return at;
  }
}
