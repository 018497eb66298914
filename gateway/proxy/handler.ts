// The request state machine: admission (method, body rules; clients were checked at accept), target resolution,
// peer routing, then for GET/HEAD a cache lookup, a fill (leader or joiner) or a pass-through,
// and for unsafe methods a pass-through that invalidates what it changed.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../lib/log.ts';
import type { AccessLogger } from '../access-log.ts';
import type { DestAcl } from '../acl.ts';
import type { EntryMeta } from '../cache/entry.ts';
import type { Fill } from '../cache/fill.ts';
import { usability } from '../cache/freshness.ts';
import { varyMatches } from '../cache/key.ts';
import { findVariant } from '../cache/variants.ts';
import { parseCacheControl } from '../http/cache-control.ts';
import { isForwardable, isSafe } from '../http/methods.ts';
import { failedPrecondition } from '../http/preconditions.ts';
import type { UpstreamResponse } from '../upstream.ts';
import { classifyError, dropBody, UpstreamFailure } from '../upstream.ts';
import { accessRecord } from './access-record.ts';
import { serveBlocks } from './blocks.ts';
import { prefetch, type PrefetchResult, revalidateInBackground, runFill, staleUsable } from './fetcher.ts';
import { hitStatus } from './heads.ts';
import { forwardInterim } from './interim.ts';
import { HitServer } from './hit-server.ts';
import { notModified, sendNotModified } from './hit.ts';
import { pass, type PassDeps, relayUpstream, viaPeer } from './pass.ts';
import { upstreamHeaders } from './relay.ts';
import { fillHeaders, NAME, noteCacheStatus, sendError, sendPreconditionFailed, sendUnsatisfiable, streamFill } from './respond.ts';
import { type Ring, type Target, TargetCache } from './target.ts';

/** Request headers that ask for less than the whole object, or for none of it if unchanged. */
const ASKED_PART = ['range', 'if-range', 'if-none-match', 'if-modified-since'] as const;

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

export interface HandlerDeps extends PassDeps {
  readonly destAcl: DestAcl;
  readonly rings: readonly Ring[];
  /** Where each request's line goes (--access-log), in Squid's format; nothing when unset. */
  readonly accessLog?: AccessLogger;
  /** --s3-block-size: range reads of larger uncached S3 objects fetch aligned blocks (0: off). */
  readonly s3BlockSize?: number;
}

export class ProxyHandler {
  readonly #d: HandlerDeps;
  readonly #log: Logger;
  /** Request targets resolved, shared with the front reader's plain hits (plain-hit.ts). */
  readonly targets: TargetCache;
  readonly #hits: HitServer;
  /** Counts an answered request; `this` is the response (node:http keeps its request as `req`). */
  readonly #counted: (this: ServerResponse) => void;

  constructor(deps: HandlerDeps) {
    this.#d = deps;
    this.#log = deps.log;
    this.targets = new TargetCache(deps.rings, deps.destAcl);
    this.#hits = new HitServer(deps);
    const metrics = deps.metrics;
    this.#counted = function counted(this: ServerResponse): void {
      metrics.request(this.req.method ?? '?', this.statusCode);
    };
  }

  /**
   * Counts the request in requests_total and writes its --access-log line once its connection is
   * done with it. Every request the gateway proxies goes through here, the S3 endpoint's too.
   */
  account(req: IncomingMessage, res: ServerResponse): void {
    const access = this.#d.accessLog;
    // 'close', not 'finish': a response cut after its headers (a broken upstream body, a client
    // that left) counts and is logged too, as Squid logs aborted transfers. It is emitted once.
    // Without an access log one listener shared by every response counts it: no closure per request.
    if (!access) {
      res.on('close', this.#counted);
      return;
    }
    const started = performance.now();
    // Read now: once a request with a body is done, the server detaches req.socket (null).
    const socket = req.socket;
    const sentBefore = socket?.bytesWritten ?? 0;
    res.on('close', () => {
      this.#d.metrics.request(req.method ?? '?', res.statusCode);
      access(accessRecord(req, res, socket, sentBefore, started));
    });
  }

  /** Entry point from the HTTP server. Never throws; every failure becomes a response. */
  handle(req: IncomingMessage, res: ServerResponse): void {
    this.account(req, res);
    // A memory hit is answered within this call; only what waits on I/O returns a promise.
    let run: Promise<void> | void;
    try {
      run = this.#handle(req, res);
    } catch (err) {
      this.#internal(err, req.url, res);
      return;
    }
    if (run) run.catch((err) => this.#internal(err, req.url, res));
  }

  #internal(err: unknown, url: string | undefined, res: ServerResponse): void {
    this.#log.error({ err, url }, 'internal error while handling a request');
    sendError(res, 500, 'proxy_internal_error', 'internal error in the gateway; see its log');
  }

  #handle(req: IncomingMessage, res: ServerResponse): Promise<void> | void {
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
    const resolved = this.targets.resolve(req.url ?? '', req.headers.host);
    if (!resolved.ok) return sendError(res, resolved.status, resolved.error, resolved.message);
    const target = resolved.target;
    const owner = d.peers?.ring.owner(target.key);
    if (owner && owner !== d.peers!.self && req.headers['x-estuary-peer'] === undefined) {
      return this.#peerFirst(req, res, target, owner);
    }
    return this.#route(req, res, target);
  }

  async #peerFirst(req: IncomingMessage, res: ServerResponse, target: Target, owner: string): Promise<void> {
    if (await viaPeer(this.#d, req, res, owner)) return;
    return this.#route(req, res, target);
  }

  #route(req: IncomingMessage, res: ServerResponse, target: Target): Promise<void> | void {
    const method = req.method ?? '';
    if (!CACHEABLE_METHODS.has(method)) return pass(this.#d, req, res, target, 'method', !isSafe(method));
    if (req.headers.authorization !== undefined) return pass(this.#d, req, res, target, 'bypass', false);
    return this.#cached(req, res, target);
  }

  #cached(req: IncomingMessage, res: ServerResponse, requested: Target): Promise<void> | void {
    const d = this.#d;
    const indexRead = d.cache.disk.indexRead();
    if (indexRead && !d.cache.lookup(requested.key)) {
      // A client that left during the wait is not fetched for (nginx's proxy_ignore_client_abort off).
      // Not req.destroyed: a request without a body starts ended and destroyed (server.ts).
      return indexRead.then(() => (res.destroyed || req.socket.destroyed ? void res.destroy() : this.#cached(req, res, requested)));
    }
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
    // A stored copy that fails the client's If-Match / If-Unmodified-Since may only be older than
    // the origin's version: the origin is asked first, and the precondition is then evaluated
    // against the version it confirms (304) or sends, never answered from the stored copy alone.
    const checked = !noCache && found !== undefined && failedPrecondition(req.headers, found.meta.status, found.meta.headers) !== undefined;
    if (checked) stale = found.meta;
    if (!noCache && !checked) {
      if (found) {
        const now = Date.now();
        const u = usability(found.meta, reqCc, now, d.heuristicMaxS);
        if (u.use === 'stale-revalidate') {
          const headers = upstreamHeaders(req, FILL_DROPPED, target, 'GET');
          revalidateInBackground(d, { target, headers, clientHeaders: req.headers, stale: found.meta });
          const status = `${NAME}; hit; ttl=${u.ttl}; detail=stale-while-revalidate`;
          return this.#hits.serve(req, res, target, found, status);
        }
        if (u.use !== 'revalidate') {
          const status = hitStatus(found.meta, NAME, u.ttl, found.tier, u.use === 'stale-ok');
          return this.#hits.serve(req, res, target, found, status);
        }
        stale = found.meta;
      }
    }
    if (reqCc.has('only-if-cached')) {
      return sendError(res, 504, 'http_request_error', 'not in cache and the request said only-if-cached');
    }
    return this.#miss(req, res, target, noCache || checked, stale, checked);
  }

  /** Not stored, or stale: the request joins the key's fill, or starts it. */
  async #miss(
    req: IncomingMessage,
    res: ServerResponse,
    target: Target,
    noCache: boolean,
    stale: EntryMeta | undefined,
    checked = false,
  ): Promise<void> {
    const d = this.#d;
    // A HEAD whose precondition the stored copy failed waits for the revalidation like a GET.
    if (req.method === 'HEAD' && !checked) return pass(this.#d, req, res, target, 'uri-miss', false, target.lifetimeS !== undefined);
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
        headers: upstreamHeaders(req, FILL_DROPPED, target, 'GET'),
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
        return pass(this.#d, req, res, target, fwd, false);
      }
      const failed = failedPrecondition(req.headers, fill.meta!.status, fill.meta!.headers);
      if (failed) {
        return sendPreconditionFailed(res, failed, target.sign !== undefined, `${NAME}; fwd=${fwd}${collapsed}`);
      }
      // The fill asked without the client's validators: a version the client holds is a 304.
      if (notModified(req, fill.meta!)) return sendNotModified(res, fill.meta!, 0, `${NAME}; fwd=${fwd}${collapsed}`);
      // A range of a body whose length was not announced (chunked) cannot be cut from the fill
      // while it arrives: from the stored copy once it is done, else the request goes upstream.
      if (fill.length === undefined && req.headers.range !== undefined) {
        const stored = state === 'done' ? d.cache.lookup(target.key) : undefined;
        if (stored) return this.#hits.serve(req, res, target, stored, `${NAME}; fwd=${fwd}${collapsed}; stored`);
        return pass(this.#d, req, res, target, fwd, false);
      }
      const fh = fill.acquire();
      if (!fh) {
        const found = d.cache.lookup(target.key);
        if (found) return this.#hits.serve(req, res, target, found, `${NAME}; fwd=${fwd}${collapsed}; stored`);
        return pass(this.#d, req, res, target, fwd, false);
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
      if (fill.state !== 'failed') return pass(this.#d, req, res, target, fwd, false);
    }
    if (state === 'revalidated') {
      const found = d.cache.lookup(target.key);
      if (found)
        return this.#hits.serve(
          req,
          res,
          target,
          found,
          `${NAME}; fwd=stale; fwd-status=304${collapsed}`,
          true,
        );
      return pass(this.#d, req, res, target, 'miss', false);
    }
    if (state === 'pass') {
      const reason = fill.passReason ? `; detail=${fill.passReason}` : '';
      if (leader && fill.pass) {
        const up = fill.pass as UpstreamResponse;
        const status = `${NAME}; fwd=${fwd}${reason}`;
        // The fill asked for the whole object, to store it. A client that asked for a range (a
        // part of a parallel download, which S3 clients write at that part's offset whatever
        // comes) or conditionally (expecting 304) does not get the whole object: its own request
        // goes upstream.
        if (up.statusCode === 200 && ASKED_PART.some((h) => req.headers[h] !== undefined)) {
          dropBody(up.body);
          return pass(this.#d, req, res, target, fwd, false);
        }
        // The fill asked without the client's preconditions: they are checked on its answer.
        const failed = failedPrecondition(req.headers, up.statusCode, up.headers);
        if (!failed) return relayUpstream(this.#d, res, up, status);
        dropBody(up.body);
        return sendPreconditionFailed(res, failed, target.sign !== undefined, status);
      }
      return pass(this.#d, req, res, target, fwd, false);
    }
    const failure = fill.error instanceof UpstreamFailure ? fill.error : classifyError(fill.error);
    if (failure.passable) return pass(this.#d, req, res, target, `${fwd}; detail=not-stored`, false);
    if (stale && fwd !== 'request' && staleUsable(d, stale)) {
      const found = d.cache.lookup(target.key);
      if (found) {
        const { ttl } = usability(found.meta, new Map(), Date.now(), d.heuristicMaxS);
        this.#log.warn({ url: target.url, reason: failure.proxyError }, 'upstream failed; serving stale');
        return this.#hits.serve(
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

  /**
   * An S3 request the S3 endpoint has authenticated and turned into a signing target: plain object
   * reads through the cache, other reads and writes passed through (writes invalidate their key).
   */
  serveS3(req: IncomingMessage, res: ServerResponse, target: Target, mode: 'cached' | 'read' | 'write'): Promise<void> {
    const run = async () =>
      mode === 'cached'
        ? this.#s3Cached(req, res, target)
        : pass(this.#d, req, res, target, mode === 'write' ? 'method' : 'bypass', mode === 'write');
    return run().catch((err) => {
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

  /** Drops `keys` in every worker; resolves once none serves them (a write's answer waits for it). */
  async invalidate(keys: readonly string[]): Promise<void> {
    await this.#d.cache.invalidateAll(keys);
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
}
