// Request methods (RFC 9110 §9). Pure.
//
// Any method is forwarded, the ones this file does not know included (M-SEARCH, PROPFIND, PURGE
// to an origin ...): a proxy need not understand a method to pass it on. Only GET and HEAD are
// answered from the cache. Every method that is not known to be safe invalidates what it may
// have changed (RFC 9111 §4.4: "including methods whose safety is unknown").

/** Safe methods (RFC 9110 §9.2.1): they change nothing on the origin, so they invalidate nothing. */
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

/**
 * Methods the gateway refuses. CONNECT has its own path (tunnels, gateway/connect.ts). TRACE
 * would echo the client's request, cookies included, back through a shared proxy (cross-site
 * tracing), and nothing a site runs needs it through one.
 */
const REFUSED = new Set(['CONNECT', 'TRACE']);

/** RFC 9110 §5.6.2 token: what a method name may be. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export function isSafe(method: string): boolean {
  return SAFE.has(method);
}

export function isForwardable(method: string): boolean {
  return TOKEN.test(method) && !REFUSED.has(method);
}
