// Which stored keys an unsafe request invalidates (RFC 9111 §4.4): its target, and the URIs in
// the response's Location and Content-Location when they share the target's origin (another
// origin's objects must not be purgeable by whoever controls this one). Pure.
//
// Forward mode: the origin is the absolute URL's scheme, host and port. Reverse mode: a URI is
// "this origin" when it names the host the client asked (the gateway, as the client sees it) or
// one of the ring's upstream servers (an origin that writes its own absolute URLs); either way it
// maps to the ring's key for that path.

import { forwardKey, reverseKey } from './key.ts';

export interface InvalidationTarget {
  readonly key: string;
  /** forwardKey form (http://host/path) or reverse://ring/path. */
  readonly url: string;
  /** Upstream origins (scheme://host:port) of the ring or the destination. */
  readonly servers: readonly string[];
  /** Origin-form path and query. */
  readonly path: string;
}

const REVERSE = /^reverse:\/\/([^/]*)/;

/** Keys to invalidate after a non-error response to an unsafe request. */
export function invalidatedKeys(
  target: InvalidationTarget,
  requestHost: string | undefined,
  locations: readonly (string | string[] | undefined)[],
): string[] {
  const keys = [target.key];
  const ring = REVERSE.exec(target.url)?.[1];
  const base = ring === undefined ? target.url : `http://${requestHost ?? 'localhost'}${target.path}`;
  let baseUrl: URL;
  try {
    baseUrl = new URL(base);
  } catch {
    return keys;
  }
  for (const v of locations) {
    if (typeof v !== 'string') continue;
    let u: URL;
    try {
      u = new URL(v, baseUrl);
    } catch {
      continue; // an unparsable Location names nothing we could have stored
    }
    if (u.protocol !== 'http:') continue;
    if (ring === undefined) {
      if (u.host === baseUrl.host) keys.push(forwardKey(u));
    } else if (u.host === baseUrl.host || target.servers.includes(u.origin)) {
      keys.push(reverseKey(ring, `${u.pathname}${u.search}`));
    }
  }
  return keys;
}
