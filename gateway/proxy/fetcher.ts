// Drives a fill as its leader: one upstream GET, the decision to store, the body written to a
// temporary file while readers tail it, the checks (length, CVMFS content hash), and the commit.
// Anything that goes wrong after the headers leaves nothing stored and fails the fill, so every
// reader cuts its connection instead of completing a short or corrupt body.

import { open } from 'node:fs/promises';
import type { Logger } from '../../lib/log.ts';
import { isBlockOf } from '../cache/block.ts';
import type { Cache } from '../cache/cache.ts';
import type { Reservation, TempFile } from '../cache/disk-store.ts';
import { commitOrKeep, writeAt } from './disk-write.ts';
import type { EntryMeta } from '../cache/entry.ts';
import type { Fill } from '../cache/fill.ts';
import { mayStore, mergeNotModified, notModifiedSelects, staleOnErrorLimit } from '../cache/freshness.ts';
import { currentAge, freshnessLifetime } from '../cache/freshness.ts';
import { varyValues } from '../cache/key.ts';
import { s3Decision, s3Vary } from '../cache/s3-rules.ts';
import { headBytes, keptHeaders, MAX_STORED_HEAD } from '../cache/stored-headers.ts';
import { newHasher } from '../cvmfs.ts';
import { requestNoCache } from '../http/cache-control.ts';
import { endToEnd, first, type HeaderMap } from '../http/headers.ts';
import { targetedDirectives } from '../http/targeted.ts';
import type { Metrics } from '../metrics.ts';
import {
  classifyError,
  drainBody,
  dropBody,
  UpstreamFailure,
  type UpstreamRequest,
  type UpstreamResponse,
  type Upstreams,
} from '../upstream.ts';
import { contradicts, dropContradicted } from './contradicted.ts';
import type { Target } from './target.ts';

export interface FetchDeps {
  readonly cache: Cache;
  readonly upstreams: Upstreams;
  readonly metrics: Metrics;
  readonly log: Logger;
  readonly maxObjectSize: number;
  readonly heuristicMaxS: number;
  readonly staleIfErrorS: number;
  /** Targeted cache-control fields (RFC 9213), highest priority first. */
  readonly targetedCacheControl?: readonly string[];
}

export interface FillRequest {
  readonly target: Target;
  /** Headers to send upstream, already cleaned of hop-by-hop, range and conditional headers. */
  readonly headers: Record<string, string | string[]>;
  /** The client's request headers, for the store decision and Vary. */
  readonly clientHeaders: HeaderMap;
  /** A stored response to revalidate (conditional request) or fall back to on upstream errors. */
  readonly stale?: EntryMeta;
  /** Interim (1xx) responses go to the client whose request started the fill. */
  readonly onInfo?: UpstreamRequest['onInfo'];
}

/** Where the CVMFS rules override the generic ones; undefined keeps the RFC 9111 decision. */
function cvmfsDecision(req: FillRequest, status: number): { store: boolean; reason?: string } | undefined {
  if (req.target.cvmfs?.kind !== 'data') return undefined;
  // A 404 from a stratum 1 means "not replicated yet here", and 5xx is transient: never keep them.
  if (status !== 200) return { store: false, reason: 'cvmfs-data-status' };
  return undefined;
}

function staleUsable(deps: FetchDeps, stale: EntryMeta | undefined): boolean {
  if (!stale) return false;
  const over = currentAge(stale, Date.now()) - freshnessLifetime(stale, deps.heuristicMaxS);
  return over <= staleOnErrorLimit(stale, deps.staleIfErrorS);
}

export async function runFill(deps: FetchDeps, fill: Fill, req: FillRequest): Promise<void> {
  const { target } = req;
  const headers = { ...req.headers };
  const stale = req.stale;
  if (stale) {
    const etag = first(stale.headers.etag);
    const lm = first(stale.headers['last-modified']);
    // With an ETag, only If-None-Match: a server must then ignore If-Modified-Since (RFC 9110
    // §13.1.3), but S3 stores (s3rver, Swift) answer 304 to an object replaced within the same
    // second as its Last-Modified, which would keep the old bytes.
    if (etag) headers['if-none-match'] = etag;
    else if (lm) headers['if-modified-since'] = lm;
  }
  const requestTime = Date.now();
  let res: UpstreamResponse;
  try {
    res = await deps.upstreams.request(target.servers, {
      method: 'GET',
      path: target.path,
      headers,
      failoverOn404: target.cvmfs?.kind === 'data',
      label: target.label,
      onInfo: req.onInfo,
    });
  } catch (err) {
    return failFill(deps, fill, classifyError(err));
  }
  const responseTime = Date.now();
  const resHeaders = endToEnd(res.headers as HeaderMap);
  if (res.statusCode === 304 && stale) {
    drainBody(res.body);
    // A 304 for another version than ours: fetch the object itself, unconditionally.
    if (!notModifiedSelects(stale.headers, resHeaders)) return runFill(deps, fill, { ...req, stale: undefined });
    const merged = mergeNotModified(stale.headers, resHeaders);
    // Merged, the head would outgrow what an origin may send: the object is fetched whole again,
    // and its new head replaces the stored one.
    if (headBytes(merged) > MAX_STORED_HEAD) {
      deps.log.info({ url: target.url }, 'a 304 would grow the stored head past 16 KiB; fetching the object again');
      return runFill(deps, fill, { ...req, stale: undefined });
    }
    // An S3 object made unstorable in place (its metadata now says no-store): the copy goes, and
    // the object itself is fetched and passed through.
    if (target.lifetimeS !== undefined && !s3Decision(200, merged).store) {
      await dropContradicted(deps, stale);
      return runFill(deps, fill, { ...req, stale: undefined });
    }
    return revalidated(deps, fill, stale, merged, requestTime, responseTime, target.lifetimeS !== undefined);
  }
  // A no-cache request revalidates its stale copy but may never be answered with it (RFC 9111
  // §4.2.4): it gets the upstream's own error instead.
  if (res.statusCode >= 500 && !requestNoCache(req.clientHeaders) && staleUsable(deps, stale)) {
    drainBody(res.body);
    return failFill(
      deps,
      fill,
      new UpstreamFailure('http_response_status', 502, `upstream answered ${res.statusCode}`),
    );
  }
  const facts = { method: 'GET', headers: req.clientHeaders };
  const directives = targetedDirectives(resHeaders, deps.targetedCacheControl ?? []);
  const generic = mayStore(facts, { status: res.statusCode, headers: resHeaders, directives });
  const special = cvmfsDecision(req, res.statusCode);
  const isData = target.cvmfs?.kind === 'data' && res.statusCode === 200;
  // Content-addressed data is immutable: storable without freshness headers, but never against
  // an explicit no-store/private/authorization refusal.
  let decision = special ?? generic;
  if (!special && isData && !generic.store && generic.reason === 'no-freshness') decision = { store: true };
  // S3 objects through the S3 endpoint: the request was authorised by the gateway itself and the
  // object is revalidated by ETag on a fixed interval (cache/s3-rules.ts).
  if (target.lifetimeS !== undefined) decision = s3Decision(res.statusCode, resHeaders);
  // A block answer from another version (the store ignored If-Match, as s3rver does) or a store
  // that ignored the range is never stored, so blocks of two versions cannot meet.
  // The S3 rules hold for a block as for the whole object: an SSE-C or no-store answer is not stored.
  if (target.block) {
    const b = target.block;
    decision = isBlockOf(res.statusCode, resHeaders, b, b)
      ? s3Decision(res.statusCode, resHeaders, true)
      : { store: false, reason: 'block-mismatch' };
  }
  const length =
    res.headers['content-length'] !== undefined ? Number(res.headers['content-length']) : undefined;
  if (decision.store && length !== undefined && length > deps.maxObjectSize) {
    decision = { store: false, reason: 'too-large' };
  }
  if (decision.store && deps.cache.unstorable.has(target.key)) decision = { store: false, reason: 'too-large' };
  // An announced length holds its room against --disk-cache while it is written; one that can
  // never fit is not copied to disk only to be dropped at the end.
  const room = decision.store && length !== undefined ? deps.cache.disk.reserve(length) : undefined;
  if (decision.store && length !== undefined && !room) decision = { store: false, reason: 'too-large' };
  if (stale && !decision.store && contradicts(target, res.statusCode)) await dropContradicted(deps, stale);
  try {
    await storeOrPass(deps, fill, req, res, decision, { directives, requestTime, responseTime, isData, length, resHeaders }, room);
  } finally {
    room?.release();
  }
}

interface Fetched {
  readonly directives: string | undefined;
  readonly requestTime: number;
  readonly responseTime: number;
  readonly isData: boolean;
  readonly length: number | undefined;
  readonly resHeaders: Record<string, string | string[]>;
}

async function storeOrPass(
  deps: FetchDeps,
  fill: Fill,
  req: FillRequest,
  res: UpstreamResponse,
  given: { store: boolean; reason?: string },
  f: Fetched,
  room: Reservation | undefined,
): Promise<void> {
  const { target } = req;
  const { directives, requestTime, responseTime, isData, length, resHeaders } = f;
  let decision = given;
  if (decision.store && !(await deps.cache.disk.ensureRoom(length ?? 0))) {
    deps.log.warn({ url: target.url }, 'cache disk full; passing through unstored');
    decision = { store: false, reason: 'disk-full' };
  }
  if (!decision.store) {
    fill.pass = res;
    fill.passReason = decision.reason;
    fill.finish('pass');
    deps.cache.endFill(fill);
    return;
  }
  const meta: EntryMeta = {
    key: target.key,
    url: target.url,
    status: res.statusCode,
    headers: keptHeaders(resHeaders, directives, target.lifetimeS !== undefined),
    directives,
    requestTime,
    responseTime,
    size: 0,
    vary: varyValues(target.lifetimeS !== undefined ? s3Vary(resHeaders.vary) : resHeaders.vary, req.clientHeaders),
    repo: target.cvmfs?.repo,
    immutable: isData ? true : undefined,
    lifetimeS: target.lifetimeS,
  };
  let temp: TempFile;
  try {
    temp = await deps.cache.disk.createTemp();
  } catch (err) {
    // Disk full or unwritable: still answer, just without storing.
    deps.log.warn({ err: String(err), url: target.url }, 'cannot create cache file; passing through');
    fill.pass = res;
    fill.passReason = 'disk-error';
    fill.finish('pass');
    deps.cache.endFill(fill);
    return;
  }
  await streamToDisk(deps, fill, req, res, meta, temp, length, room);
}

async function streamToDisk(
  deps: FetchDeps,
  fill: Fill,
  req: FillRequest,
  res: UpstreamResponse,
  meta: EntryMeta,
  temp: TempFile,
  length: number | undefined,
  room: Reservation | undefined,
): Promise<void> {
  const hash = req.target.cvmfs?.kind === 'data' ? req.target.cvmfs.hash : undefined;
  const hasher = hash && meta.status === 200 ? newHasher(hash.algorithm) : undefined;
  const keepInMemory = length !== undefined && length <= deps.cache.memory.maxObject;
  const chunks: Buffer[] = [];
  if (keepInMemory) fill.chunks = chunks;
  try {
    fill.startStreaming(meta, length, await open(temp.path, 'r'), temp.path);
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      hasher?.update(chunk);
      if (keepInMemory) chunks.push(chunk);
      await writeAt(deps, temp, chunk, fill.written);
      deps.metrics.bytesIn.inc(chunk.length);
      fill.progress(chunk.length);
      if (fill.stored && fill.written > deps.maxObjectSize) {
        // Known lengths were refused before; this body had none. Its readers still get all of
        // it (from the temporary file), but it is not kept, and later requests pass through.
        fill.stored = false;
        deps.cache.unstorable.set(meta.key, true);
        deps.log.info({ url: req.target.url }, 'body outgrew --max-object-size; delivering it unstored');
      }
    }
    if (length !== undefined && fill.written !== length) {
      throw new UpstreamFailure(
        'http_response_incomplete',
        502,
        `upstream sent ${fill.written} of ${length} bytes`,
      );
    }
    if (hasher && hash && hasher.digest('hex') !== hash.hex) {
      deps.metrics.verifyFailures.inc();
      throw new UpstreamFailure('http_response_incomplete', 502, 'content does not match its hash name');
    }
    const final: EntryMeta = { ...meta, size: fill.written };
    // Written through the gateway while this fill ran: these bytes may be the old version.
    if (fill.overtaken) fill.stored = false;
    if (!fill.stored) {
      fill.path = temp.path;
      fill.meta = final;
      fill.finish('done');
      deps.cache.endFill(fill);
      await deps.cache.disk.abort(temp);
      return;
    }
    // The entry's own charge replaces the room held for it.
    room?.release();
    const entry = await commitOrKeep(deps, fill, temp, final);
    if (!entry) return;
    fill.path = entry.path;
    // A write acknowledged meanwhile found nothing to remove yet: the old bytes must not stay
    // behind it, and the other workers are not told of them (the done event says not stored).
    if (fill.overtaken) {
      fill.stored = false;
      deps.cache.dropStored(final.key, entry.path);
    } else if (keepInMemory && deps.cache.admits(final.key, final.size)) {
      deps.cache.memory.set({ meta: final, body: Buffer.concat(chunks) });
    }
    fill.meta = final;
    fill.finish('done');
    deps.cache.endFill(fill);
  } catch (err) {
    dropBody(res.body);
    await deps.cache.disk.abort(temp);
    const failure = err instanceof UpstreamFailure ? err : classifyError(err);
    deps.log.warn(
      { url: req.target.url, reason: failure.proxyError, err: failure.message },
      'fill failed; nothing stored',
    );
    failFill(deps, fill, failure);
  }
}

function failFill(deps: FetchDeps, fill: Fill, failure: UpstreamFailure): void {
  fill.finish('failed', failure);
  deps.cache.endFill(fill);
}

async function revalidated(
  deps: FetchDeps,
  fill: Fill,
  stale: EntryMeta,
  /** The stored head with the 304's fields merged in (mergeNotModified). */
  merged: Record<string, string | string[]>,
  requestTime: number,
  responseTime: number,
  s3: boolean,
): Promise<void> {
  const directives = targetedDirectives(merged, deps.targetedCacheControl ?? []);
  const meta: EntryMeta = {
    ...stale,
    headers: keptHeaders(merged, directives, s3),
    directives,
    requestTime,
    responseTime,
  };
  // Only the entry revalidated: a write may have dropped it, or a newer fill replaced it, meanwhile.
  const found = deps.cache.disk.peek(stale.key);
  const disk = found && !fill.overtaken && found.meta.responseTime === stale.responseTime ? found : undefined;
  try {
    if (disk) await deps.cache.disk.updateMeta(disk, meta);
  } catch (err) {
    deps.log.warn({ err: String(err), url: stale.url }, 'could not update a revalidated entry; dropping it');
    void deps.cache.invalidate(stale.key);
  }
  const mem = deps.cache.memory.get(stale.key);
  if (mem && !fill.overtaken && mem.meta.responseTime === stale.responseTime) deps.cache.memory.set({ meta, body: mem.body });
  fill.meta = meta;
  fill.finish('revalidated');
  deps.cache.endFill(fill);
}

/**
 * stale-while-revalidate (RFC 5861 §3): the client has its stale answer already; one request per
 * object goes upstream behind its back. A fill already in flight for the key (here or in another
 * worker) is that request, so nothing more is sent. What comes back is stored, or refreshes the
 * entry on a 304; an answer that may not be stored is dropped, since no client waits for it.
 */
export function revalidateInBackground(deps: FetchDeps, req: FillRequest): void {
  const drive = async () => {
    const { fill, leader } = await deps.cache.claim(req.target.key);
    if (!leader) return;
    try {
      await runFill(deps, fill, req);
    } catch (err) {
      fill.finish('failed', classifyError(err));
      deps.cache.endFill(fill);
      throw err;
    }
    if (fill.state === 'pass') dropPass(fill);
  };
  drive().catch((err) => deps.log.error({ err, url: req.target.url }, 'background revalidation crashed'));
}

/** A pass-through answer nobody will read: free its connection without an unhandled error. */
function dropPass(fill: Fill): void {
  const up = fill.pass as UpstreamResponse | undefined;
  if (up) dropBody(up.body);
}

export type PrefetchResult = 'stored' | 'revalidated' | 'not-stored' | 'failed';

/**
 * Fetches an object into the cache with no client waiting (admin prefetch, pre-warming): joins a
 * fill in flight or drives one, and resolves when it has ended.
 */
export async function prefetch(deps: FetchDeps, req: FillRequest): Promise<{ result: PrefetchResult; detail?: string }> {
  const { fill, leader } = await deps.cache.claim(req.target.key);
  if (leader) {
    deps.metrics.misses.inc();
    await runFill(deps, fill, req).catch((err) => {
      fill.finish('failed', classifyError(err));
      deps.cache.endFill(fill);
    });
  }
  while (fill.state === 'pending' || fill.state === 'streaming') await fill.changed();
  if (fill.state === 'pass') {
    if (leader) dropPass(fill);
    return { result: 'not-stored', detail: fill.passReason };
  }
  if (fill.state === 'done') return fill.stored ? { result: 'stored' } : { result: 'not-stored', detail: 'too-large' };
  if (fill.state === 'revalidated') return { result: 'revalidated' };
  return { result: 'failed', detail: fill.error?.message };
}

export { staleUsable };
