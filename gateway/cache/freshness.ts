// RFC 9111 rules for a shared cache: may a response be stored, for how long is it fresh, how old
// is it now, and may a stored response answer a given request. Pure: times are passed in (ms).

import { deltaSeconds, type Directives, maxStale, parseCacheControl } from '../http/cache-control.ts';
import { first, type HeaderMap, httpDate, listItems } from '../http/headers.ts';
import type { EntryMeta } from './entry.ts';

/** Statuses that are heuristically cacheable (RFC 9110 §15.1); 206 is excluded: we store whole bodies. */
const HEURISTIC_STATUSES = new Set([200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]);
/** Statuses whose meaning we understand well enough to store at all. */
const UNDERSTOOD_STATUSES = new Set([...HEURISTIC_STATUSES, 302, 303, 307]);

/** The heuristic is 10% of the time since Last-Modified (RFC 9111 §4.2.2's suggestion). */
const HEURISTIC_FRACTION = 0.1;

export interface StoreDecision {
  readonly store: boolean;
  /** Why not, for Cache-Status detail and logs. */
  readonly reason?: string;
}

export interface RequestFacts {
  readonly method: string;
  readonly headers: HeaderMap;
}

export interface ResponseFacts {
  readonly status: number;
  readonly headers: HeaderMap;
}

/** RFC 9111 §3 for a shared cache, plus our rule of never sharing a response to an authorised request. */
export function mayStore(req: RequestFacts, res: ResponseFacts): StoreDecision {
  if (req.method !== 'GET') return { store: false, reason: 'method' };
  if (!UNDERSTOOD_STATUSES.has(res.status)) return { store: false, reason: 'status' };
  const reqCc = parseCacheControl(req.headers['cache-control']);
  const resCc = parseCacheControl(res.headers['cache-control']);
  if (reqCc.has('no-store') || resCc.has('no-store')) return { store: false, reason: 'no-store' };
  if (resCc.has('private')) return { store: false, reason: 'private' };
  if (req.headers.authorization !== undefined) return { store: false, reason: 'authorization' };
  if (listItems(res.headers.vary).includes('*')) return { store: false, reason: 'vary-star' };
  if (res.headers['set-cookie'] !== undefined && !resCc.has('public') && !resCc.has('s-maxage')) {
    // Not forbidden by the RFC, but a cookie-setting response shared between users is a leak.
    return { store: false, reason: 'set-cookie' };
  }
  const explicit =
    resCc.has('max-age') || resCc.has('s-maxage') || res.headers.expires !== undefined || resCc.has('public');
  const heuristic = HEURISTIC_STATUSES.has(res.status);
  if (!explicit && !heuristic) return { store: false, reason: 'no-freshness' };
  if (!explicit && res.headers['last-modified'] === undefined && res.headers.etag === undefined) {
    // No lifetime and no validator: a stored copy could never be used.
    return { store: false, reason: 'no-freshness' };
  }
  return { store: true };
}

/** Freshness lifetime in seconds (RFC 9111 §4.2.1), with the heuristic only where allowed. */
export function freshnessLifetime(
  meta: Pick<EntryMeta, 'status' | 'headers'>,
  heuristicMaxS: number,
): number {
  const cc = parseCacheControl(meta.headers['cache-control']);
  const sMaxAge = deltaSeconds(cc, 's-maxage');
  if (sMaxAge !== undefined) return sMaxAge;
  const maxAge = deltaSeconds(cc, 'max-age');
  if (maxAge !== undefined) return maxAge;
  if (meta.headers.expires !== undefined) {
    const expires = httpDate(meta.headers.expires);
    const date = httpDate(meta.headers.date);
    // An invalid Expires (e.g. "0") means already expired (RFC 9111 §5.3).
    if (expires === undefined || date === undefined) return 0;
    return Math.max(0, Math.floor((expires - date) / 1000));
  }
  if (!HEURISTIC_STATUSES.has(meta.status) && !cc.has('public')) return 0;
  const lastModified = httpDate(meta.headers['last-modified']);
  const date = httpDate(meta.headers.date);
  if (lastModified === undefined || date === undefined || lastModified > date) return 0;
  return Math.min(heuristicMaxS, Math.floor(((date - lastModified) / 1000) * HEURISTIC_FRACTION));
}

/** Current age in seconds (RFC 9111 §4.2.3). */
export function currentAge(
  meta: Pick<EntryMeta, 'headers' | 'requestTime' | 'responseTime'>,
  now: number,
): number {
  const ageValue = Number(first(meta.headers.age) ?? 0);
  const date = httpDate(meta.headers.date) ?? meta.responseTime;
  const apparentAge = Math.max(0, meta.responseTime - date) / 1000;
  const responseDelay = (meta.responseTime - meta.requestTime) / 1000;
  const correctedAgeValue = (Number.isFinite(ageValue) && ageValue >= 0 ? ageValue : 0) + responseDelay;
  const correctedInitialAge = Math.max(apparentAge, correctedAgeValue);
  const residentTime = (now - meta.responseTime) / 1000;
  return Math.max(0, Math.floor(correctedInitialAge + residentTime));
}

export type Usability =
  | { readonly use: 'fresh'; readonly ttl: number }
  | { readonly use: 'stale-ok'; readonly ttl: number }
  | { readonly use: 'revalidate'; readonly ttl: number };

/**
 * May `meta` answer a request with directives `reqCc` without going upstream (RFC 9111 §4.2, §5.2.1)?
 * `immutable` objects (verified CVMFS data) never need revalidation. `ttl` is lifetime minus age.
 */
interface Derived {
  readonly lifetime: number;
  /** corrected_initial_age (RFC 9111 §4.2.3) in seconds, before adding resident time. */
  readonly initialAge: number;
  readonly noCache: boolean;
  readonly mustRevalidate: boolean;
}

/**
 * What a stored response's headers say never changes while it is stored (a 304 makes a new
 * EntryMeta), so it is parsed once: the hit path then costs a subtraction, not a header parse.
 */
const derivedCache = new WeakMap<EntryMeta, Derived>();

function derived(meta: EntryMeta, heuristicMaxS: number): Derived {
  let d = derivedCache.get(meta);
  if (!d) {
    const cc = parseCacheControl(meta.headers['cache-control']);
    d = {
      lifetime: freshnessLifetime(meta, heuristicMaxS),
      initialAge: currentAge(meta, meta.responseTime),
      noCache: cc.has('no-cache'),
      mustRevalidate: cc.has('must-revalidate') || cc.has('proxy-revalidate') || cc.has('s-maxage'),
    };
    derivedCache.set(meta, d);
  }
  return d;
}

const NO_DIRECTIVES: Directives = new Map();

/** Current age in whole seconds, from the cached derivation (see currentAge for the rule). */
export function ageNow(meta: EntryMeta, now: number, heuristicMaxS: number): number {
  return Math.max(0, Math.floor(derived(meta, heuristicMaxS).initialAge + (now - meta.responseTime) / 1000));
}

export function usability(meta: EntryMeta, reqCc: Directives, now: number, heuristicMaxS: number): Usability {
  const d = derived(meta, heuristicMaxS);
  const age = ageNow(meta, now, heuristicMaxS);
  const ttl = d.lifetime - age;
  if (meta.immutable) return { use: 'fresh', ttl };
  if (d.noCache) return { use: 'revalidate', ttl };
  if (reqCc === NO_DIRECTIVES || reqCc.size === 0) {
    return ttl > 0 ? { use: 'fresh', ttl } : { use: 'revalidate', ttl };
  }
  const reqMaxAge = deltaSeconds(reqCc, 'max-age');
  // Ages are whole seconds, so an entry stored this second has age 0; max-age=0 still means
  // "check with the origin" to every client that sends it (Frontier, browsers' reload).
  if (reqMaxAge !== undefined && (reqMaxAge === 0 || age > reqMaxAge)) return { use: 'revalidate', ttl };
  const minFresh = deltaSeconds(reqCc, 'min-fresh') ?? 0;
  if (ttl - minFresh > 0) return { use: 'fresh', ttl };
  const allowed = maxStale(reqCc);
  if (!d.mustRevalidate && allowed !== undefined && -ttl <= allowed) return { use: 'stale-ok', ttl };
  return { use: 'revalidate', ttl };
}

/** How long past expiry a stored response may still be served when every upstream fails. */
export function staleOnErrorLimit(meta: EntryMeta, configuredMaxS: number): number {
  const cc = parseCacheControl(meta.headers['cache-control']);
  if (cc.has('must-revalidate') || cc.has('proxy-revalidate') || cc.has('s-maxage') || cc.has('no-cache')) {
    return 0;
  }
  const sie = deltaSeconds(cc, 'stale-if-error');
  return sie !== undefined ? Math.max(sie, configuredMaxS) : configuredMaxS;
}

/** Merges the headers of a 304 into a stored response (RFC 9111 §3.2). */
export function mergeNotModified(
  stored: Record<string, string | string[]>,
  fresh: Record<string, string | string[]>,
): Record<string, string | string[]> {
  const out = { ...stored };
  for (const [k, v] of Object.entries(fresh)) {
    // Content-Length of a 304 describes nothing (RFC 9111 §3.2 excludes it).
    if (k === 'content-length') continue;
    out[k] = v;
  }
  return out;
}
