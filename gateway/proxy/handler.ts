// The request state machine: admission (method, body rules; clients were checked at accept), target resolution,
// peer routing, then for GET/HEAD a cache lookup, a fill (leader or joiner) or a pass-through,
// and for unsafe methods a pass-through that invalidates what it changed.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../../lib/log.ts';
import type { AccessLogger, AccessRecord } from '../access-log.ts';
import type { DestAcl } from '../acl.ts';
import type { Found } from '../cache/cache.ts';
import type { EntryMeta } from '../cache/entry.ts';
import type { Fill } from '../cache/fill.ts';
import { ageNow, usability } from '../cache/freshness.ts';
import { invalidatedKeys } from '../cache/invalidation.ts';
import { varyMatches } from '../cache/key.ts';
import { findVariant } from '../cache/variants.ts';
import { parseCacheControl } from '../http/cache-control.ts';
import { isForwardable, isSafe } from '../http/methods.ts';
import type { HashRing } from '../ring.ts';
import type { UpstreamResponse } from '../upstream.ts';
import { classifyError, UpstreamFailure } from '../upstream.ts';
import {
  type FetchDeps,
  prefetch,
  type PrefetchResult,
  revalidateInBackground,
  runFill,
  staleUsable,
} from './fetcher.ts';
import { noteVersion, serveBlocks } from './blocks.ts';
import { forwardInterim } from './interim.ts';
import { relay, upstreamHeaders } from './relay.ts';
import {
  cacheStatusOf,
  fillHeaders,
  NAME,
  noteCacheStatus,
  sendError,
  sendUnsatisfiable,
  serveStored,
  streamFill,
} from './respond.ts';
import { type Ring, resolveTarget, type Target, type TargetResult } from './target.ts';

/** Recent distinct request targets remembered; each entry is a few hundred bytes. */
const TARGET_CACHE_ENTRIES = 10_000;

const CACHEABLE_METHODS = new Set(['GET', 'HEAD']);
/** Request headers a fill never forwards: it fetches the whole object for everyone. */
const FILL_DROPPED = [
  'range',
  'if-range',
  'if-none-match',
  'if-modified-since',
  'if-match',
  'if-unmodified-since',
  'host',
  'expect',
];

export interface HandlerDeps extends FetchDeps {
  readonly destAcl: DestAcl;
  readonly rings: readonly Ring[];
  readonly peers?: { readonly ring: HashRing; readonly self: string };
  /** Where each request's line goes (--access-log), in Squid's format; nothing when unset. */
  readonly accessLog?: AccessLogger;
  /** --s3-block-size: range reads of larger uncached S3 objects fetch aligned blocks (0: off). */
  readonly s3BlockSize?: number;
}

/** What the access log says about a finished request; the bytes are those the socket sent for it. */
function accessRecord(
  req: IncomingMessage,
  res: ServerResponse,
  socket: IncomingMessage['socket'] | undefined,
  sentBefore: number,
  started: number,
): AccessRecord {
  const url = req.url ?? '';
  let upstreamHost: string | undefined;
  try {
    upstreamHost = /^[a-z]+:\/\//i.test(url) ? new URL(url).host : req.headers.host;
  } catch {
    upstreamHost = undefined;
  }
  const type = res.getHeader('content-type');
  return {
    endMs: Date.now(),
    elapsedMs: performance.now() - started,
    client: socket?.remoteAddress,
    status: res.statusCode,
    bytes: Math.max(0, (socket?.bytesWritten ?? sentBefore) - sentBefore),
    method: req.method ?? '-',
    url,
    cacheStatus: cacheStatusOf(res),
    upstreamHost,
    contentType: typeof type === 'string' ? type : undefined,
  };
}

export class ProxyHandler {
  readonly #d: HandlerDeps;
  readonly #log: Logger;
  /** Resolved targets of recent request lines; hot objects are asked for again and again. */
  readonly #targets = new LRUCache<string, TargetResult>({ max: TARGET_CACHE_ENTRIES });

  constructor(deps: HandlerDeps) {
    this.#d = deps;
    this.#log = deps.log;
  }

  /** resolveTarget is pure in (URL, Host) for a given configuration, so its answers can be kept. */
  #target(url: string, host: string | undefined): TargetResult {
    const k = url[0] === '/' ? `${host ?? ''} ${url}` : url;
    let t = this.#targets.get(k);
    if (!t) {
      t = resolveTarget(url, host, this.#d.rings, this.#d.destAcl);
      this.#targets.set(k, t);
    }
    return t;
  }

  /** Entry point from the HTTP server. Never throws; every failure becomes a response. */
  handle(req: IncomingMessage, res: ServerResponse): void {
    const started = performance.now();
    // Read now: once a request with a body is done, the server detaches req.socket (null).
    const access = this.#d.accessLog;
    const socket = access ? req.socket : undefined;
    const sentBefore = socket?.bytesWritten ?? 0;
    // 'close', not 'finish': a response cut after its headers (a broken upstream body) counts
    // and is logged too, as Squid logs aborted transfers.
    res.once('close', () => {
      this.#d.metrics.request(req.method ?? '?', res.statusCode);
      if (access) access(accessRecord(req, res, socket, sentBefore, started));
    });
    this.#handle(req, res).catch((err) => {
      this.#log.error({ err, url: req.url }, 'internal error while handling a request');
      sendError(res, 500, 'proxy_internal_error', 'internal error in the gateway; see its log');
    });
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const d = this.#d;
    const method = req.method ?? '';
    // --allow-client was checked when the connection was accepted (server.ts).
    if (!isForwardable(method)) {
      return sendError(res, 501, 'http_request_error', `method ${method} is not supported`);
    }
    const hasBody =
      (req.headers['content-length'] ?? '0') !== '0' || req.headers['transfer-encoding'] !== undefined;
    if (CACHEABLE_METHODS.has(method) && hasBody) {
      return sendError(res, 400, 'http_request_error', `a ${method} request must not carry a body`);
    }
    const resolved = this.#target(req.url ?? '', req.headers.host);
    if (!resolved.ok) return sendError(res, resolved.status, resolved.error, resolved.message);
    const target = resolved.target;
    const owner = d.peers?.ring.owner(target.key);
    if (owner && owner !== d.peers!.self && req.headers['x-estuary-peer'] === undefined) {
      if (await this.#viaPeer(req, res, owner)) return;
    }
    if (!CACHEABLE_METHODS.has(method)) return this.#pass(req, res, target, 'method', !isSafe(method));
    if (req.headers.authorization !== undefined) return this.#pass(req, res, target, 'bypass', false);
    await this.#cached(req, res, target);
  }

  async #cached(req: IncomingMessage, res: ServerResponse, requested: Target): Promise<void> {
    const d = this.#d;
    const reqCc = parseCacheControl(req.headers['cache-control']);
    const pragma = req.headers.pragma;
    const noCache =
      reqCc.has('no-cache') ||
      (req.headers['cache-control'] === undefined && pragma !== undefined && /no-cache/i.test(pragma));
    let stale: EntryMeta | undefined;
    // Several Vary variants per URL: each lives under its own key (gateway/cache/vary.ts).
    const { key, found } = findVariant(d.cache, requested.key, req.headers);
    d.cache.touch(key);
    const target = key === requested.key ? requested : { ...requested, key };
    // A no-cache request revalidates the stored copy (RFC 9111 §5.2.1.4); CVMFS clients send it
    // after a failed check, so for them the stored copy is replaced, not revalidated.
    if (noCache && !target.cvmfs && found) stale = found.meta;
    if (!noCache) {
      if (found) {
        const now = Date.now();
        const u = usability(found.meta, reqCc, now, d.heuristicMaxS);
        if (u.use === 'stale-revalidate') {
          const headers = this.#upstreamHeaders(req, FILL_DROPPED, target, 'GET');
          revalidateInBackground(d, { target, headers, clientHeaders: req.headers, stale: found.meta });
          const status = `${NAME}; hit; ttl=${u.ttl}; detail=stale-while-revalidate`;
          return this.#serveHit(req, res, target, found, status);
        }
        if (u.use !== 'revalidate') {
          const detail = u.use === 'stale-ok' ? `; detail=${found.tier}-stale` : `; detail=${found.tier}`;
          return this.#serveHit(req, res, target, found, `${NAME}; hit; ttl=${u.ttl}${detail}`);
        }
        stale = found.meta;
      }
    }
    if (reqCc.has('only-if-cached')) {
      return sendError(res, 504, 'http_request_error', 'not in cache and the request said only-if-cached');
    }
    if (req.method === 'HEAD') return this.#pass(req, res, target, 'uri-miss', false, target.lifetimeS !== undefined);
    const { fill, leader } = await d.cache.claim(target.key);
    const storedMeanwhile =
      leader && d.cache.coordinator && !noCache ? d.cache.lookup(target.key) : undefined;
    if (storedMeanwhile && storedMeanwhile.meta !== stale) {
      // Another worker stored it while our claim travelled: everyone waiting here serves that.
      fill.meta = storedMeanwhile.meta;
      fill.finish('revalidated');
      d.cache.endFill(fill);
    } else if (leader) {
      d.metrics.misses.inc();
      runFill(d, fill, {
        target,
        headers: this.#upstreamHeaders(req, FILL_DROPPED, target, 'GET'),
        clientHeaders: req.headers,
        stale,
        onInfo: (info) => forwardInterim(res, info),
      }).catch((err) => {
        this.#log.error({ err, url: target.url }, 'fill crashed');
        fill.finish('failed', classifyError(err));
        d.cache.endFill(fill);
      });
    } else {
      d.metrics.collapsed.inc();
    }
    const fwd = noCache ? 'request' : stale ? 'stale' : 'miss';
    await this.#fromFill(req, res, target, fill, leader, fwd, stale);
  }

  async #fromFill(
    req: IncomingMessage,
    res: ServerResponse,
    target: Target,
    fill: Fill,
    leader: boolean,
    fwd: string,
    stale: EntryMeta | undefined,
  ): Promise<void> {
    const d = this.#d;
    const state = await fill.headers();
    const collapsed = leader ? '' : '; collapsed';
    if (state === 'streaming' || state === 'done') {
      // A fill started for another variant of this URL cannot answer this request.
      if (!leader && !varyMatches(fill.meta?.vary, req.headers)) {
        return this.#pass(req, res, target, fwd, false);
      }
      const fh = fill.acquire();
      if (!fh) {
        const found = d.cache.lookup(target.key);
        if (found) return this.#serveHit(req, res, target, found, `${NAME}; fwd=${fwd}${collapsed}; stored`);
        return this.#pass(req, res, target, fwd, false);
      }
      // Only a body of known length within the limits is sure to be stored once complete; one of
      // unknown length may outgrow --max-object-size and then passes through unstored.
      const stored = fill.length !== undefined ? '; stored' : '';
      const status = `${NAME}; fwd=${fwd}${collapsed}${stored}`;
      const h = fillHeaders(fill, req, status);
      noteCacheStatus(res, status);
      if (!('headers' in h)) {
        fill.release();
        if (target.sign) return sendUnsatisfiable(res, fill.length ?? 0, true, status);
        return sendError(res, 416, 'http_request_error', 'requested range not satisfiable');
      }
      if (req.method === 'HEAD') {
        fill.release();
        res.writeHead(h.status, h.headers);
        res.end();
        return;
      }
      const sent = await streamFill(fill, fh, res, h, (n) => d.metrics.bytesOut.inc(n));
      if (sent === 'sent') return;
      if (fill.state !== 'failed') return this.#pass(req, res, target, fwd, false);
    }
    if (state === 'revalidated') {
      const found = d.cache.lookup(target.key);
      if (found)
        return this.#serveHit(
          req,
          res,
          target,
          found,
          `${NAME}; fwd=stale; fwd-status=304${collapsed}`,
          true,
        );
      return this.#pass(req, res, target, 'miss', false);
    }
    if (state === 'pass') {
      const reason = fill.passReason ? `; detail=${fill.passReason}` : '';
      if (leader && fill.pass)
        return this.#relay(res, fill.pass as UpstreamResponse, `${NAME}; fwd=${fwd}${reason}`);
      return this.#pass(req, res, target, fwd, false);
    }
    const failure = fill.error instanceof UpstreamFailure ? fill.error : classifyError(fill.error);
    if (failure.passable) return this.#pass(req, res, target, `${fwd}; detail=not-stored`, false);
    if (stale && fwd !== 'request' && staleUsable(d, stale)) {
      const found = d.cache.lookup(target.key);
      if (found) {
        const { ttl } = usability(found.meta, new Map(), Date.now(), d.heuristicMaxS);
        this.#log.warn({ url: target.url, reason: failure.proxyError }, 'upstream failed; serving stale');
        return this.#serveHit(
          req,
          res,
          target,
          found,
          `${NAME}; hit; fwd=stale; detail=stale-on-error; ttl=${ttl}`,
        );
      }
    }
    this.#log.warn({ url: target.url, reason: failure.proxyError, err: failure.message }, 'upstream failed');
    return sendError(res, failure.status, failure.proxyError, failure.message);
  }

  /** Serves a stored entry; if its file vanished meanwhile, forgets it and goes upstream instead. */
  async #serveHit(
    req: IncomingMessage,
    res: ServerResponse,
    target: Target,
    found: Found,
    cacheStatus: string,
    quiet = false,
  ): Promise<void> {
    const d = this.#d;
    const tier = found.tier;
    if (tier === 'disk' && d.cache.admits(found.meta.key, found.meta.size)) {
      const promoted = await this.#promote(found);
      if (!promoted) return this.#gone(req, res, target, found);
      found = promoted;
    }
    const age = ageNow(found.meta, Date.now(), d.heuristicMaxS);
    const onBytes = (n: number) => d.metrics.bytesOut.inc(n);
    if (!(await serveStored(req, res, found, { age, cacheStatus, onBytes, s3: target.sign !== undefined }))) {
      return this.#gone(req, res, target, found);
    }
    if (!quiet) (tier === 'memory' ? d.metrics.memoryHit : d.metrics.diskHit).inc();
  }

  /** A stored entry whose file vanished: forgotten, and the request goes upstream instead. */
  #gone(req: IncomingMessage, res: ServerResponse, target: Target, found: Found): Promise<void> {
    this.#d.cache.invalidate(found.meta.key);
    return this.#pass(req, res, target, 'miss', false);
  }

  /**
   * Reads a disk entry whole into memory, where the next hit finds it, and serves this one from
   * that copy: one read of the file instead of a read to serve it and another to promote it.
   */
  async #promote(found: Found & { tier: 'disk' }): Promise<Found | undefined> {
    const cache = this.#d.cache;
    const entry = cache.disk.peek(found.meta.key);
    if (!entry || entry.path !== found.path) return undefined;
    const body = await cache.readBody(entry);
    if (!body) return undefined;
    if (cache.disk.peek(entry.meta.key) === entry) cache.promote({ meta: entry.meta, body });
    return { tier: 'memory', meta: entry.meta, body };
  }

  /** Not stored, not shared: this request alone goes upstream and its answer goes back as it is. */
  async #pass(
    req: IncomingMessage,
    res: ServerResponse,
    target: Target,
    fwd: string,
    unsafe: boolean,
    noteHead = false,
  ): Promise<void> {
    const d = this.#d;
    const withBody = unsafe && req.method !== 'OPTIONS';
    // A client that leaves before the upstream answered takes its upstream request with it.
    const gone = new AbortController();
    const onClose = () => gone.abort();
    res.once('close', onClose);
    let up: UpstreamResponse;
    try {
      up = await d.upstreams.request(target.servers, {
        method: req.method ?? 'GET',
        path: target.path,
        headers: this.#upstreamHeaders(req, ['host', 'expect'], target, req.method ?? 'GET'),
        body: withBody ? req : undefined,
        signal: gone.signal,
        label: target.label,
        onInfo: (info) => forwardInterim(res, info),
      });
    } catch (err) {
      if (gone.signal.aborted) return;
      const f = classifyError(err);
      this.#log.warn({ url: target.url, reason: f.proxyError, err: f.message }, 'upstream failed');
      return sendError(res, f.status, f.proxyError, f.message);
    } finally {
      res.off('close', onClose);
    }
    if (unsafe && up.statusCode < 400) this.#invalidateAfterUnsafe(target, up, req.headers.host);
    // Clients HEAD an S3 object before reading it in ranges: that answer saves the block read its own.
    if (noteHead) noteVersion(d.cache, target.key, up.statusCode, up.headers);
    return this.#relay(res, up, `${NAME}; fwd=${fwd}`);
  }

  /** RFC 9111 §4.4: a successful unsafe request invalidates the URI and its Location/Content-Location. */
  #invalidateAfterUnsafe(target: Target, up: UpstreamResponse, host: string | undefined): void {
    const locations = [up.headers.location, up.headers['content-location']];
    for (const key of invalidatedKeys(target, host, locations)) this.#d.cache.invalidate(key);
  }

  #relay(res: ServerResponse, up: UpstreamResponse, cacheStatus: string): Promise<void> {
    const failed = (err: unknown) =>
      this.#log.warn({ url: res.req?.url, err: String(err) }, 'upstream failed; response not completed');
    return relay(res, up, cacheStatus, this.#d.metrics, failed);
  }

  #upstreamHeaders(
    req: IncomingMessage,
    drop: readonly string[],
    target?: Target,
    method = 'GET',
  ): Record<string, string | string[]> {
    return upstreamHeaders(req, drop, target, method);
  }

  /**
   * An S3 request the S3 endpoint has authenticated and turned into a signing target: plain object
   * reads through the cache, other reads and writes passed through (writes invalidate their key).
   */
  serveS3(req: IncomingMessage, res: ServerResponse, target: Target, mode: 'cached' | 'read' | 'write'): Promise<void> {
    const run =
      mode === 'cached'
        ? this.#s3Cached(req, res, target)
        : this.#pass(req, res, target, mode === 'write' ? 'method' : 'bypass', mode === 'write');
    return run.catch((err) => {
      this.#log.error({ err, url: target.url }, 'internal error while handling an S3 request');
      sendError(res, 500, 'proxy_internal_error', 'internal error in the gateway; see its log');
    });
  }

  /** A range of an object neither stored whole nor being fetched whole comes from aligned blocks. */
  async #s3Cached(req: IncomingMessage, res: ServerResponse, target: Target): Promise<void> {
    const d = this.#d;
    const blocks =
      req.method === 'GET' &&
      req.headers.range !== undefined &&
      !d.cache.lookup(target.key) &&
      !d.cache.fills.has(target.key);
    if (blocks && (await serveBlocks(d, d.s3BlockSize ?? 0, req, res, target))) return;
    return this.#cached(req, res, target);
  }

  invalidate(key: string): void {
    this.#d.cache.invalidate(key);
  }

  /** Brings `target` into the cache with no client waiting; a fresh stored copy is left alone. */
  async prefetch(target: Target): Promise<{ result: PrefetchResult | 'cached'; detail?: string }> {
    const d = this.#d;
    const found = d.cache.lookup(target.key);
    if (found && usability(found.meta, new Map(), Date.now(), d.heuristicMaxS).use === 'fresh') return { result: 'cached' };
    const base: Record<string, string> = { via: `1.1 ${NAME}` };
    const headers = target.sign ? target.sign('GET', base) : base;
    return prefetch(d, { target, headers, clientHeaders: {}, stale: found?.meta });
  }

  /** Consistent hashing: the owning peer fetches and caches; we relay. False when the peer is down. */
  async #viaPeer(req: IncomingMessage, res: ServerResponse, peer: string): Promise<boolean> {
    const d = this.#d;
    const headers = this.#upstreamHeaders(req, ['expect']);
    headers['x-estuary-peer'] = d.peers!.self;
    if (req.url?.startsWith('/') && req.headers.host) headers.host = req.headers.host;
    let up: UpstreamResponse;
    try {
      up = await d.upstreams.request([peer], {
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers,
        body: CACHEABLE_METHODS.has(req.method ?? '') ? undefined : req,
        label: 'peer',
        onInfo: (info) => forwardInterim(res, info),
      });
    } catch (err) {
      this.#log.warn({ peer, err: classifyError(err).message }, 'peer unavailable; handling locally');
      if (CACHEABLE_METHODS.has(req.method ?? '')) return false;
      sendError(res, 502, 'destination_unavailable', 'peer unavailable');
      return true;
    }
    const status = up.headers['cache-status'];
    await this.#relay(res, up, `${status ? `${status}, ` : ''}${NAME}; fwd=miss; detail=peer`);
    return true;
  }
}
