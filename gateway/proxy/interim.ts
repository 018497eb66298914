// Interim (1xx) responses (RFC 9110 §15.2): passed on to the client as they arrive from upstream,
// before the final response, and never stored (only final responses are).
//
// What can pass depends on the two HTTP stacks. undici reports 1xx responses to a request's
// `onInfo` callback, except 100 Continue, which it treats as a broken response (it never sends
// Expect: 100-continue, so an origin that answers 100 misbehaves in its eyes); the gateway strips
// Expect from what it forwards and node:http answers a client's Expect: 100-continue itself. On
// the client side node:http can write 102 (writeProcessing) and 103 (writeEarlyHints); there is
// no way to write another 1xx code, so those (104 ...) are dropped. HTTP/1.0 clients get none
// (RFC 9110 §15.2: a server must not send them 1xx).

import type { ServerResponse } from 'node:http';
import { endToEnd, type HeaderMap } from '../http/headers.ts';

export interface Interim {
  readonly statusCode: number;
  readonly headers: Record<string, string | string[]>;
}

/** Sends `info` on to the client if it can still take one; returns whether it did. */
export function forwardInterim(res: ServerResponse, info: Interim): boolean {
  if (res.headersSent || res.destroyed || res.req.httpVersion === '1.0') return false;
  if (info.statusCode === 102) {
    res.writeProcessing();
    return true;
  }
  if (info.statusCode !== 103) return false;
  const hints = endToEnd(info.headers as HeaderMap);
  // node:http requires a Link field in Early Hints; without one the hints say nothing useful.
  if (hints.link === undefined) return false;
  try {
    res.writeEarlyHints(hints);
  } catch {
    return false; // a Link value node:http refuses (control characters): drop the hint, not the request
  }
  return true;
}
