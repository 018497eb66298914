// A client that writes exact bytes on one connection and reads the answers back as they came:
// heads verbatim, bodies by Content-Length. For tests of how the gateway reads a connection
// (pipelining, heads in pieces, the front reader) where a real HTTP client would hide the bytes.

import { connect, type Socket } from 'node:net';
import { onTeardown } from '../../helpers/cleanup.ts';

export interface RawAnswer {
  /** The head as sent, CRLFs included. */
  readonly head: string;
  readonly status: number;
  /** Header names lowercased; a repeated one keeps its last value. */
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

export class RawConnection {
  readonly socket: Socket;
  #buf = Buffer.alloc(0);
  #closed = false;
  #wake?: () => void;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', (d: Buffer) => {
      this.#buf = Buffer.concat([this.#buf, d]);
      this.#wake?.();
    });
    socket.on('close', () => {
      this.#closed = true;
      this.#wake?.();
    });
    socket.on('error', () => undefined);
  }

  static async open(url: string): Promise<RawConnection> {
    const u = new URL(url);
    const socket = connect(Number(u.port), u.hostname);
    onTeardown(() => void socket.destroy());
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return new RawConnection(socket);
  }

  write(text: string | Buffer): void {
    this.socket.write(typeof text === 'string' ? Buffer.from(text, 'latin1') : text);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Bytes received and not yet read as an answer. */
  get unread(): number {
    return this.#buf.length;
  }

  /** Reads the next answer; `bodyless` for the answer to a HEAD. Rejects after `timeoutMs`. */
  async read(bodyless = false, timeoutMs = 5000): Promise<RawAnswer> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const answer = this.#take(bodyless);
      if (answer) return answer;
      if (this.#closed) throw new Error(`connection closed; unread: ${JSON.stringify(this.#buf.toString('latin1'))}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no complete answer in ${timeoutMs} ms; unread: ${JSON.stringify(this.#buf.toString('latin1').slice(0, 300))}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.#wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.#wake = undefined;
    }
  }

  /** Resolves once the gateway closed the connection, or rejects after `timeoutMs`. */
  async waitClosed(timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.#closed) {
      if (Date.now() > deadline) throw new Error(`still open after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  #take(bodyless: boolean): RawAnswer | undefined {
    const end = this.#buf.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const head = this.#buf.subarray(0, end + 4).toString('latin1');
    const lines = head.split('\r\n');
    const status = Number(lines[0]!.split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const i = line.indexOf(':');
      if (i > 0) headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
    }
    if (!bodyless && /chunked/i.test(headers['transfer-encoding'] ?? '')) {
      const chunked = dechunk(this.#buf, end + 4);
      if (!chunked) return undefined;
      this.#buf = this.#buf.subarray(chunked.next);
      return { head, status, headers, body: chunked.body };
    }
    const length = bodyless || status === 304 || status === 204 ? 0 : Number(headers['content-length'] ?? 0);
    if (this.#buf.length < end + 4 + length) return undefined;
    const body = Buffer.from(this.#buf.subarray(end + 4, end + 4 + length));
    this.#buf = this.#buf.subarray(end + 4 + length);
    return { head, status, headers, body };
  }
}

/** A chunked body starting at `from`, once all of it (and the empty trailer) arrived. */
function dechunk(buf: Buffer, from: number): { body: Buffer; next: number } | undefined {
  const parts: Buffer[] = [];
  let p = from;
  for (;;) {
    const eol = buf.indexOf('\r\n', p);
    if (eol < 0) return undefined;
    const size = Number.parseInt(buf.subarray(p, eol).toString('latin1'), 16);
    if (size === 0) {
      const end = buf.indexOf('\r\n\r\n', eol);
      return end < 0 ? undefined : { body: Buffer.concat(parts), next: end + 4 };
    }
    if (buf.length < eol + 2 + size + 2) return undefined;
    parts.push(buf.subarray(eol + 2, eol + 2 + size));
    p = eol + 2 + size + 2;
  }
}

/** A GET or HEAD head with `headers` (Host first). */
export function getHead(target: string, host: string, extra = '', method = 'GET'): string {
  return `${method} ${target} HTTP/1.1\r\nHost: ${host}\r\n${extra}\r\n`;
}
