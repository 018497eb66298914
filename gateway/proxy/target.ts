// Where a request goes: an absolute URI (forward proxy) to its own origin if the destination is
// allowed, an origin-form path (reverse mode) to a named ring of upstream servers. Pure.

import type { DestAcl } from '../acl.ts';
import { forwardKey, reverseKey } from '../cache/key.ts';
import { type CvmfsPath, classifyCvmfs } from '../cvmfs.ts';

export interface Ring {
  readonly name: string;
  /** Origins (scheme://host:port), tried in order. */
  readonly servers: readonly string[];
}

export interface Target {
  readonly key: string;
  /** Absolute URL for logs, purge and the summary. */
  readonly url: string;
  readonly servers: readonly string[];
  /** Path and query sent upstream. */
  readonly path: string;
  readonly cvmfs?: CvmfsPath;
  /** host + first path segment, for the summary. */
  readonly prefix: string;
}

export type TargetResult =
  | { readonly ok: true; readonly target: Target }
  | { readonly ok: false; readonly status: number; readonly error: string; readonly message: string };

function prefixOf(host: string, pathname: string): string {
  const seg = pathname.split('/')[1] ?? '';
  return seg ? `${host}/${seg}` : host;
}

export function resolveTarget(
  rawUrl: string,
  hostHeader: string | undefined,
  rings: readonly Ring[],
  dest: DestAcl,
): TargetResult {
  if (rawUrl.startsWith('/')) return reverseTarget(rawUrl, hostHeader, rings);
  let u: URL;
  try {
    u = new URL(rawUrl);
  } catch {
    return { ok: false, status: 400, error: 'http_request_error', message: 'malformed request target' };
  }
  if (u.protocol !== 'http:') {
    return {
      ok: false,
      status: 400,
      error: 'http_request_error',
      message: `only http:// URLs are proxied (use CONNECT for ${u.protocol}//)`,
    };
  }
  if (u.username || u.password) {
    return {
      ok: false,
      status: 400,
      error: 'http_request_error',
      message: 'credentials in URLs are refused',
    };
  }
  const port = Number(u.port || 80);
  if (!dest.allows(u.hostname, port)) {
    return {
      ok: false,
      status: 403,
      error: 'destination_ip_prohibited',
      message: `destination ${u.host} is not in the allow-list (--allow-dest)`,
    };
  }
  const pathname = u.pathname;
  return {
    ok: true,
    target: {
      key: forwardKey(u),
      url: forwardKey(u),
      servers: [`${u.protocol}//${u.host}`],
      path: `${pathname}${u.search}`,
      cvmfs: classifyCvmfs(pathname),
      prefix: prefixOf(u.host.toLowerCase(), pathname),
    },
  };
}

function reverseTarget(path: string, hostHeader: string | undefined, rings: readonly Ring[]): TargetResult {
  const host = (hostHeader ?? '').replace(/:\d+$/, '').toLowerCase();
  const ring = rings.find((r) => r.name === host) ?? rings.find((r) => r.name === 'default') ?? rings[0];
  if (!ring) {
    return {
      ok: false,
      status: 400,
      error: 'http_request_error',
      message: 'not a proxy request: send an absolute URI, or configure --upstream for reverse mode',
    };
  }
  const q = path.indexOf('?');
  const pathname = q === -1 ? path : path.slice(0, q);
  return {
    ok: true,
    target: {
      key: reverseKey(ring.name, path),
      url: reverseKey(ring.name, path),
      servers: ring.servers,
      path,
      cvmfs: classifyCvmfs(pathname),
      prefix: prefixOf(ring.name, pathname),
    },
  };
}

/** Parses `NAME=URL,URL` groups (see gateway/options.ts) into rings of origins. */
export function ringsFrom(groups: readonly { name: string; urls: readonly string[] }[]): Ring[] {
  return groups.map((g) => ({ name: g.name, servers: g.urls.map((u) => new URL(u).origin) }));
}
