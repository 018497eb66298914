// RFC 9111 rules for a shared cache: may a response be stored, for how long is it fresh, how old
// is it now, and may a stored response answer a given request. Pure: times are passed in (ms).

import { deltaSeconds, type Directives, maxStale, parseCacheControl } from '../http/cache-control.ts';
import { parseAge } from '../http/age.ts';
import { type HeaderMap, httpDate, listItems } from '../http/headers.ts';
import type { EntryMeta } from './entry.ts';
import { omittedFields } from './stored-headers.ts';

/** Statuses that are heuristically cacheable (RFC 9110 §15.1); 206 is excluded: we store whole bodies. */
const HEURISTIC_STATUSES = new Set([200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]);
/**
 * Statuses whose meaning we understand, for `must-understand` (RFC 9111 §5.2.2.3). Other final
 * statuses are stored only with explicit freshness, and never 206 (partial) or 304 (which
 * describes another response): the gateway stores whole, self-describing bodies.
 */
const UNDERSTOOD_STATUSES = new Set([...HEURISTIC_STATUSES, 302, 303, 307]);
const NEVER_STORED = new Set([206, 304]);

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
  /** A targeted cache-control field's value (gateway/http/targeted.ts) that replaces Cache-Control. */
  readonly directives?: string;
}

/** The directives that govern this cache: a targeted field's, else Cache-Control's. */
export function directivesOf(r: { headers: HeaderMap; directives?: string }): Directives {
  return parseCacheControl(r.directives ?? r.headers['cache-control']);
}

/** RFC 9111 §3 for a shared cache, plus our rule of never sharing a response to an authorised request. */
export function mayStore(req: RequestFacts, res: ResponseFacts): StoreDecision {
  if (req.method !== 'GET') return { store: false, reason: 'method' };
  if (res.status < 200 || NEVER_STORED.has(res.status)) return { store: false, reason: 'status' };
  const reqCc = parseCacheControl(req.headers['cache-control']);
  const resCc = directivesOf(res);
  // must-understand replaces no-store for statuses we understand, and forbids storing the others.
  const understood = resCc.has('must-understand') && UNDERSTOOD_STATUSES.has(res.status);
  if (resCc.has('must-understand') && !understood) return { store: false, reason: 'status' };
  if (reqCc.has('no-store') || (resCc.has('no-store') && !understood)) {
    return { store: false, reason: 'no-store' };
  }
  // private="field" only keeps those fields out of the cache (gateway/cache/stored-headers.ts).
  if (resCc.get('private') === true) return { store: false, reason: 'private' };
  if (req.headers.authorization !== undefined) return { store: false, reason: 'authorization' };
  if (listItems(res.headers.vary).includes('*')) return { store: false, reason: 'vary-star' };
  const cookieOmitted = omittedFields(resCc).includes('set-cookie');
  const sharedOnPurpose = resCc.has('public') || resCc.has('s-maxage');
  if (res.headers['set-cookie'] !== undefined && !cookieOmitted && !sharedOnPurpose) {
    // Not forbidden by the RFC, but a cookie-setting response shared between users is a leak.
    return { store: false, reason: 'set-cookie' };
  }
  const expires = res.directives === undefined && res.headers.expires !== undefined;
  const explicit = resCc.has('max-age') || resCc.has('s-maxage') || expires || resCc.has('public');
  const heuristic = HEURISTIC_STATUSES.has(res.status);
  if (!explicit && !heuristic) return { store: false, reason: 'no-freshness' };
  if (!explicit && res.headers['last-modified'] === undefined && res.headers.etag === undefined) {
    // No lifetime and no validator: a stored copy could never be used.
    return { store: false, reason: 'no-freshness' };
  }
  return { store: true };
}

/**
 * The response's Date, for lifetimes counted from it. A missing Date is the time of receipt
 * (RFC 9110 §6.6.1); an invalid one gives undefined, so the lifetimes that need it are 0.
 */
function dateOf(meta: { headers: HeaderMap; responseTime?: number }): number | undefined {
  if (meta.headers.date === undefined) return meta.responseTime;
  return httpDate(meta.headers.date);
}

/** Freshness lifetime in seconds (RFC 9111 §4.2.1), with the heuristic only where allowed. */
export function freshnessLifetime(
  meta: Pick<EntryMeta, 'status' | 'headers' | 'directives'> & { responseTime?: number; lifetimeS?: number },
  heuristicMaxS: number,
): number {
  if (meta.lifetimeS !== undefined) return meta.lifetimeS;
  const cc = directivesOf(meta);
  const sMaxAge = deltaSeconds(cc, 's-maxage');
  if (sMaxAge !== undefined) return sMaxAge;
  const maxAge = deltaSeconds(cc, 'max-age');
  if (maxAge !== undefined) return maxAge;
  // A targeted field replaces Expires as well as Cache-Control (RFC 9213 §2.2).
  if (meta.directives === undefined && meta.headers.expires !== undefined) {
    const expires = httpDate(meta.headers.expires);
    const date = dateOf(meta);
    // An invalid Expires ("0", "UTC" for "GMT", several lines) means already expired (RFC 9111 §5.3).
    if (expires === undefined || date === undefined) return 0;
    return Math.max(0, Math.floor((expires - date) / 1000));
  }
  if (!HEURISTIC_STATUSES.has(meta.status) && !cc.has('public')) return 0;
  const lastModified = httpDate(meta.headers['last-modified']);
  const date = dateOf(meta);
  if (lastModified === undefined || date === undefined || lastModified > date) return 0;
  return Math.min(heuristicMaxS, Math.floor(((date - lastModified) / 1000) * HEURISTIC_FRACTION));
}

/** Current age in seconds (RFC 9111 §4.2.3). */
export function currentAge(
  meta: Pick<EntryMeta, 'headers' | 'requestTime' | 'responseTime'>,
  now: number,
): number {
  const ageValue = parseAge(meta.headers.age) ?? 0;
  const date = httpDate(meta.headers.date) ?? meta.responseTime;
  const apparentAge = Math.max(0, meta.responseTime - date) / 1000;
  const responseDelay = (meta.responseTime - meta.requestTime) / 1000;
  const correctedAgeValue = ageValue + responseDelay;
  const correctedInitialAge = Math.max(apparentAge, correctedAgeValue);
  const residentTime = (now - meta.responseTime) / 1000;
  return Math.max(0, Math.floor(correctedInitialAge + residentTime));
}

/**
 * fresh: serve. stale-ok: serve stale, the request allowed it (max-stale). stale-revalidate:
 * serve stale now and revalidate in the background (stale-while-revalidate, RFC 5861 §3).
 * revalidate: ask upstream before answering.
 */
export type Usability =
  | { readonly use: 'fresh'; readonly ttl: number }
  | { readonly use: 'stale-ok'; readonly ttl: number }
  | { readonly use: 'stale-revalidate'; readonly ttl: number }
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
  /** stale-while-revalidate in seconds, 0 when absent. */
  readonly swr: number;
}

/**
 * What a stored response's headers say never changes while it is stored (a 304 makes a new
 * EntryMeta), so it is parsed once: the hit path then costs a subtraction, not a header parse.
 */
const derivedCache = new WeakMap<EntryMeta, Derived>();

function derived(meta: EntryMeta, heuristicMaxS: number): Derived {
  let d = derivedCache.get(meta);
  if (!d) {
    const cc = directivesOf(meta);
    d = {
      lifetime: freshnessLifetime(meta, heuristicMaxS),
      initialAge: currentAge(meta, meta.responseTime),
      // no-cache="field" names fields, which are not stored (stored-headers.ts): the rest is reusable.
      noCache: cc.get('no-cache') === true,
      mustRevalidate: cc.has('must-revalidate') || cc.has('proxy-revalidate') || cc.has('s-maxage'),
      // An S3 object's lifetime is --s3-revalidate, set by the operator: whoever wrote the object
      // may not stretch it with its own metadata.
      swr: meta.lifetimeS !== undefined ? 0 : (deltaSeconds(cc, 'stale-while-revalidate') ?? 0),
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
    if (ttl > 0) return { use: 'fresh', ttl };
    // A request with its own freshness demands (max-age, min-fresh) gets no stale-while-revalidate.
    if (!d.mustRevalidate && -ttl < d.swr) return { use: 'stale-revalidate', ttl };
    return { use: 'revalidate', ttl };
  }
  const reqMaxAge = deltaSeconds(reqCc, 'max-age');
  // Ages are whole seconds, so an entry stored this second has age 0; max-age=0 still means
  // "check with the origin" to every client that sends it (Frontier, browsers' reload).
  if (reqMaxAge !== undefined && (reqMaxAge === 0 || age > reqMaxAge)) return { use: 'revalidate', ttl };
  const minFresh = deltaSeconds(reqCc, 'min-fresh') ?? 0;
  if (ttl - minFresh > 0) return { use: 'fresh', ttl };
  const allowed = maxStale(reqCc);
  if (!d.mustRevalidate && allowed !== undefined && -ttl <= allowed) return { use: 'stale-ok', ttl };
  // Directives a request adds for other reasons (extensions, max-stale beyond its bound) do not
  // cancel stale-while-revalidate; only its own freshness demands do.
  if (reqMaxAge === undefined && !reqCc.has('min-fresh') && !d.mustRevalidate && -ttl < d.swr) {
    return { use: 'stale-revalidate', ttl };
  }
  return { use: 'revalidate', ttl };
}

/** How long past expiry a stored response may still be served when every upstream fails. */
export function staleOnErrorLimit(meta: EntryMeta, configuredMaxS: number): number {
  const cc = directivesOf(meta);
  const noCache = cc.get('no-cache') === true;
  if (cc.has('must-revalidate') || cc.has('proxy-revalidate') || cc.has('s-maxage') || noCache) {
    return 0;
  }
  // As for stale-while-revalidate: an S3 object's metadata may shorten, never lengthen, the bound.
  const sie = meta.lifetimeS === undefined ? deltaSeconds(cc, 'stale-if-error') : undefined;
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

/**
 * Whether a 304 describes the stored response (RFC 9111 §4.3.4): a 304 naming an ETag updates
 * only a stored response with that ETag (compared strongly when the 304's is strong, weakly
 * otherwise). One naming another version comes from something that compared loosely; merging it
 * would label the old body as the new version. Without an ETag it selects the stored response.
 */
export function notModifiedSelects(
  stored: Record<string, string | string[]>,
  fresh: Record<string, string | string[]>,
): boolean {
  const etag = [fresh.etag].flat()[0]?.trim();
  if (etag === undefined) return true;
  const mine = [stored.etag].flat()[0]?.trim();
  if (mine === undefined) return false;
  if (!etag.startsWith('W/')) return !mine.startsWith('W/') && mine === etag;
  return mine.replace(/^W\//, '') === etag.slice(2);
}
