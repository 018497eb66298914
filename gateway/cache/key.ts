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

/** `pathAndQuery` is the origin-form request target, e.g. /cvmfs/atlas.cern.ch/.cvmfspublished. */
export function reverseKey(ring: string, pathAndQuery: string): string {
  return `reverse://${ring}${pathAndQuery}`;
}

/** Values of the request headers a response's Vary names, normalised (vary.ts), to store beside it. */
export const varyValues = varySelection;

/** Does a stored response's Vary selection match this request (RFC 9111 §4.1)? */
export const varyMatches = selectionMatches;
