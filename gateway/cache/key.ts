// Cache keys. Forward-proxy objects are keyed by their normalised absolute URL; reverse-mode
// objects by the upstream ring's name and the path, so failing over between the ring's servers
// still finds the same object. Pure.

import { selectionMatches, varySelection } from './vary.ts';

/** Lower-cases scheme and host and drops a default port; path and query stay as sent. */
export function normaliseUrl(u: URL): string {
  const defaultPort = u.protocol === 'https:' ? '443' : '80';
  const port = u.port && u.port !== defaultPort ? `:${u.port}` : '';
  return `${u.protocol}//${u.hostname.toLowerCase()}${port}${u.pathname}${u.search}`;
}

export function forwardKey(u: URL): string {
  return normaliseUrl(u);
}

/**
 * The key of a forward-proxy request whose path is kept byte for byte as the client sent it:
 * `origin` gives the normalised scheme, host and port, `path` the request target's path and query.
 */
export function rawForwardKey(origin: URL, path: string): string {
  const port = origin.port && origin.port !== '80' ? `:${origin.port}` : '';
  return `http://${origin.hostname}${port}${path}`;
}

/** An absolute URI as a request target spells it: scheme, authority, and path with query (no fragment). */
const ABSOLUTE = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)([^#]*)/i;

/**
 * The parts of an absolute URI a forward proxy keys by: its origin (scheme and host lower-cased by
 * URL) and the path and query as sent. Undefined when it is not one, or its authority does not parse.
 */
export function splitAbsolute(raw: string): { scheme: string; origin: URL; rest: string } | undefined {
  const m = ABSOLUTE.exec(raw);
  if (!m) return undefined;
  try {
    return { scheme: m[1]!.toLowerCase(), origin: new URL(`http://${m[2]}/`), rest: m[3] ?? '' };
  } catch {
    return undefined;
  }
}

/** A request target's path and query; an empty one is `/` (RFC 9112 §3.2.2). */
export function targetPath(rest: string): string {
  return rest === '' ? '/' : rest.startsWith('?') ? `/${rest}` : rest;
}

/**
 * A URL or prefix an admin names for a purge, in the spelling its objects are keyed by: an
 * absolute http:// URL as the client or the access log spells it (`http://LOCALHOST:80/a`) gets
 * the key of the object a request for it stored (`http://localhost/a`; RFC 3986 §6.2.2), its path
 * and query as given; a prefix keeps an empty path empty. Anything else is a key already.
 */
export function purgeSpelling(value: string, prefix: boolean): string {
  const abs = splitAbsolute(value);
  if (!abs || abs.scheme !== 'http' || abs.origin.username || abs.origin.password) return value;
  return rawForwardKey(abs.origin, prefix ? abs.rest : targetPath(abs.rest));
}

/** `pathAndQuery` is the origin-form request target, e.g. /cvmfs/atlas.cern.ch/.cvmfspublished. */
export function reverseKey(ring: string, pathAndQuery: string): string {
  return `reverse://${ring}${pathAndQuery}`;
}

/** Values of the request headers a response's Vary names, normalised (vary.ts), to store beside it. */
export const varyValues = varySelection;

/** Does a stored response's Vary selection match this request (RFC 9111 §4.1)? */
export const varyMatches = selectionMatches;
