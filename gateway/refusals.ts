// How the gateway turns a connection or request away before serving it: the fixed answers to a
// client outside --allow-client, to one past --max-connections and to a malformed request, and
// the close that lets the client read them first.

import type { Socket } from 'node:net';
import { proxyStatus } from './proxy/respond.ts';

const REFUSAL_TEXT = 'client address not in the allow-list (--allow-client)\n';
/** Sent as soon as a refused client connects; it reads a reason instead of a bare reset. */
export const REFUSAL =
  'HTTP/1.1 403 Forbidden\r\n' +
  `Proxy-Status: ${proxyStatus('http_request_denied', REFUSAL_TEXT.trim())}\r\n` +
  `Content-Type: text/plain; charset=utf-8\r\nContent-Length: ${REFUSAL_TEXT.length}\r\n` +
  `Connection: close\r\n\r\n${REFUSAL_TEXT}`;
/** A refused client that does not close its side is cut after this long. */
const REFUSED_LINGER_MS = 5000;

const OVERLOADED_TEXT = 'too many connections to this gateway (--max-connections); retry shortly\n';
export const OVERLOADED =
  'HTTP/1.1 503 Service Unavailable\r\n' +
  `Proxy-Status: ${proxyStatus('proxy_internal_error', OVERLOADED_TEXT.trim())}\r\n` +
  `Retry-After: 1\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${OVERLOADED_TEXT.length}\r\n` +
  `Connection: close\r\n\r\n${OVERLOADED_TEXT}`;
/** Connections answered with a refusal: their requests, if any, are not served. */
export const refused = new WeakSet<Socket>();

/** Refused connections lingering for their client to read the answer. */
let lingering = 0;

/**
 * Answers and closes a connection. It lingers (up to REFUSED_LINGER_MS) so the client reads the
 * answer before the close; past `lingerBudget` such connections (a flood while at the
 * connection cap, each holding a file descriptor) it is closed as soon as the answer is written.
 */
export function refuse(socket: Socket, response: string, lingerBudget = Infinity): void {
  refused.add(socket);
  socket.on('error', () => undefined);
  if (lingering >= lingerBudget) {
    socket.end(response, () => socket.destroy());
    return;
  }
  lingering++;
  socket.once('close', () => lingering--);
  socket.setTimeout(REFUSED_LINGER_MS, () => socket.destroy());
  socket.end(response);
}

/** Logs a repeated condition at most once per interval. */
export class Throttle {
  readonly #intervalMs: number;
  #last = 0;
  constructor(intervalMs: number) {
    this.#intervalMs = intervalMs;
  }

  note(write: () => void): void {
    const now = Date.now();
    if (now - this.#last < this.#intervalMs) return;
    this.#last = now;
    write();
  }
}


export function clientErrorResponse(err: NodeJS.ErrnoException): string {
  const [status, reason, msg] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'request headers too large']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'request not received in time']
        : [400, 'Bad Request', 'malformed request'];
  return `HTTP/1.1 ${status} ${reason}\r\nProxy-Status: ${proxyStatus('http_request_error', msg)}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`;
}
