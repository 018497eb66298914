// Where a request goes: an absolute URI (forward proxy) to its own origin if the destination is
// allowed, an origin-form path (reverse mode) to a named ring of upstream servers. Pure, apart
// from the cache of recent answers.

import { LRUCache } from 'lru-cache';
import type { DestAcl } from '../acl.ts';
import { rawForwardKey, reverseKey, splitAbsolute, targetPath } from '../cache/key.ts';
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
  /** The ring, or the --allow-dest entry, this request goes through: a bounded metric label. */
  readonly label: string;
  /** Signs upstream headers for a method (S3 targets: the store's own keys replace the client's). */
  readonly sign?: (method: string, headers: Record<string, string | string[]>) => Record<string, string | string[]>;
  /**
   * Freshness this target's responses get whatever their headers say (S3 objects: the
   * --s3-revalidate interval, after which the ETag is checked with the store).
   */
  readonly lifetimeS?: number;
  /**
   * An aligned block of a large S3 object (gateway/cache/block.ts): the answer is stored only when
   * it is exactly this range of this version.
   */
  readonly block?: { readonly start: number; readonly end: number; readonly etag: string; readonly size: number };
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
  // The path is forwarded exactly as received (RFC 9112 §3.2.2): a proxy that resolved dot
  // segments or backslashes itself would fetch, and cache under, a URL the client never asked for.
  const abs = splitAbsolute(rawUrl);
  if (!abs) {
    return { ok: false, status: 400, error: 'http_request_error', message: 'malformed request target' };
  }
  const { scheme, origin: u } = abs;
  if (scheme !== 'http') {
    return {
      ok: false,
      status: 400,
      error: 'http_request_error',
      message: `only http:// URLs are proxied (use CONNECT for ${scheme}://)`,
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
  const rule = dest.match(u.hostname, port);
  if (rule === undefined) {
    return {
      ok: false,
      status: 403,
      error: 'destination_ip_prohibited',
      message: `destination ${u.host} is not in the allow-list (--allow-dest)`,
    };
  }
  const path = targetPath(abs.rest);
  const q = path.indexOf('?');
  const pathname = q === -1 ? path : path.slice(0, q);
  const key = rawForwardKey(u, path);
  return {
    ok: true,
    target: {
      key,
      url: key,
      servers: [u.origin],
      path,
      cvmfs: classifyCvmfs(pathname),
      prefix: prefixOf(u.host, pathname),
      label: rule,
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
  // One string for both: two would each become a full copy of the path once flattened.
  const key = reverseKey(ring.name, path);
  return {
    ok: true,
    target: {
      key,
      url: key,
      servers: ring.servers,
      path,
      cvmfs: classifyCvmfs(pathname),
      prefix: prefixOf(ring.name, pathname),
      label: ring.name,
    },
  };
}

/** Recent distinct request targets remembered; each entry is a few hundred bytes. */
const TARGET_CACHE_ENTRIES = 10_000;
/**
 * And at most this many bytes, counted as UTF-16 strings (an upper bound: an ASCII request line is
 * stored one byte a character): a request line may be 16 KiB, and an entry holds its key, the key
 * of the cache (also its URL) and the path, so 10,000 long targets would otherwise keep over 100 MiB.
 */
const TARGET_CACHE_BYTES = 8 * 1024 * 1024;
/** The fixed part of an entry: the objects, the servers' array, the prefix and the label. */
const TARGET_ENTRY_OVERHEAD = 256;

function entrySize(t: TargetResult, k: string): number {
  if (!t.ok) return TARGET_ENTRY_OVERHEAD + 2 * (k.length + t.message.length);
  // `url` is the very string `key` is (both modes), so it is counted once.
  const { key, path, prefix } = t.target;
  return TARGET_ENTRY_OVERHEAD + 2 * (k.length + key.length + path.length + prefix.length);
}

/**
 * Resolved targets of recent request lines: resolveTarget is pure in (URL, Host) for a given
 * configuration, and hot objects are asked for again and again.
 */
export class TargetCache {
  readonly #lru = new LRUCache<string, TargetResult>({ max: TARGET_CACHE_ENTRIES, maxSize: TARGET_CACHE_BYTES, sizeCalculation: entrySize });
  readonly #rings: readonly Ring[];
  readonly #dest: DestAcl;

  constructor(rings: readonly Ring[], dest: DestAcl) {
    this.#rings = rings;
    this.#dest = dest;
  }

  resolve(url: string, host: string | undefined): TargetResult {
    const k = url[0] === '/' ? `${host ?? ''} ${url}` : url;
    let t = this.#lru.get(k);
    if (!t) {
      t = resolveTarget(url, host, this.#rings, this.#dest);
      this.#lru.set(k, t);
    }
    return t;
  }
}

/** Parses `NAME=URL,URL` groups (see gateway/options.ts) into rings of origins. */
export function ringsFrom(groups: readonly { name: string; urls: readonly string[] }[]): Ring[] {
  return groups.map((g) => ({ name: g.name, servers: g.urls.map((u) => new URL(u).origin) }));
}
