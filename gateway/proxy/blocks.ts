// Range reads of large S3 objects the cache does not hold, in aligned blocks.
//
// A range of an object larger than --s3-block-size that is not cached whole is answered from the
// blocks of that size that cover it, each its own entry in the one cache (gateway/cache/block.ts)
// and each fetched by one fill, so a herd of readers on a cold object costs one upstream GET per
// block, also across workers (the fill's claim is the block's key). The version served is the
// object's ETag and size as a HEAD told them, trusted for --s3-revalidate like a cached object;
// every block is asked for with If-Match on that ETag and accepted only when its answer names
// that ETag and exactly that range. When the object changed at the store (412, or another ETag
// from a store that ignores If-Match) the version is forgotten: a client that has received
// nothing yet is served the new version, one that has is cut off (its Content-Length tells it
// the body is short), so no answer ever mixes bytes of two versions.
//
// Blocks go to the client as they arrive, with the next block fetched while the current one is
// sent. A client that leaves does not stop the fills it started: the blocks are stored for the
// next reader. A whole-object GET is not assembled from blocks: it is fetched whole, once.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { openEntryFile } from '../cache/disk-files.ts';
import type { FileHandle } from 'node:fs/promises';
import { blockKey, blockRange, blockSpan, isBlockOf, type ObjectVersion, rangeHeaders } from '../cache/block.ts';
import type { Found } from '../cache/cache.ts';
import type { Cache } from '../cache/cache.ts';
import type { Fill } from '../cache/fill.ts';
import { endToEnd, first, type HeaderMap } from '../http/headers.ts';
import { ifMatchHolds } from '../http/preconditions.ts';
import { s3Decision } from '../cache/s3-rules.ts';
import { pass } from './pass.ts';
import { parseRange } from '../http/range.ts';
import { classifyError, drainBody, dropBody, type UpstreamResponse } from '../upstream.ts';
import { type FetchDeps, runFill } from './fetcher.ts';
import { cutResponse, drained, NAME, noteCacheStatus, sendError, sendPreconditionFailed, sendUnsatisfiable, sliceDrained } from './respond.ts';
import { releaseSlice, Slicer, takeSlice } from './slices.ts';
import type { Target } from './target.ts';
import { deltaSeconds, parseCacheControl, requestNoCache } from '../http/cache-control.ts';

/**
 * Conditional requests take the whole-object way, which knows the stored validators; except
 * If-Match, which a client sends with every range of a download it split (boto3's download_file):
 * naming the version the blocks serve, its answer is the same ranges; naming another, it is
 * checked once more against a fresh HEAD and then answered 412, as the store would.
 */
const CONDITIONAL = ['if-none-match', 'if-modified-since', 'if-unmodified-since', 'if-range'];
const VIA = `1.1 ${NAME}`;

type Source = { readonly found: Found } | { readonly fill: Fill };
/** sent: answered (or the client left). unsent: nothing went out. cut: part went out, then it failed. */
type Outcome = 'sent' | 'unsent' | 'cut';

/**
 * What a HEAD says of an object: the version to serve in blocks, nothing usable (the whole-object
 * way then), or that its answers may not be stored (s3-rules.ts: SSE-C, no-store), so the
 * client's range goes to the store as it is.
 */
type Known = ObjectVersion | undefined | 'uncacheable';

/** HEADs in flight per cache (one gateway), so a herd asks the store once. */
const heads = new WeakMap<Cache, Map<string, Promise<Known>>>();

/**
 * Answers a ranged GET of an S3 object from aligned blocks. Resolves false, having sent nothing,
 * when the request should take the whole-object way: a small object, no single range, a
 * conditional request, a HEAD the store refused, or an object that changed twice under it.
 */
export async function serveBlocks(
  d: FetchDeps,
  blockSize: number,
  req: IncomingMessage,
  res: ServerResponse,
  target: Target,
): Promise<boolean> {
  if (blockSize <= 0 || !target.sign || target.lifetimeS === undefined) return false;
  if (CONDITIONAL.some((h) => req.headers[h] !== undefined)) return false;
  // A store's CORS answer depends on the Origin, and blocks serve everyone: such a read is the
  // client's own, with its Origin, so never one that only-if-cached allows.
  const origin = req.headers.origin !== undefined;
  const cc = parseCacheControl(req.headers['cache-control']);
  // A client that will not take a stored answer unchecked (no-cache, max-age=0) gets the version
  // asked of the store again, as a whole object is revalidated (RFC 9111 §5.2.1.4).
  const recheck = requestNoCache(req.headers) || deltaSeconds(cc, 'max-age') === 0;
  // only-if-cached (RFC 9111 §5.2.1.7): every block of the range stored, of a version still
  // trusted, and nothing else the request asks for that would take the store, or 504.
  if (cc.has('only-if-cached') && (origin || recheck || !allCached(d.cache, blockSize, req, target))) {
    sendError(res, 504, 'http_request_error', 'not in cache and the request said only-if-cached');
    return true;
  }
  if (origin) {
    await pass(d, req, res, target, 'bypass', false);
    return true;
  }
  if (recheck) d.cache.objectVersions.delete(target.key);
  for (let attempt = 0; attempt < 2; attempt++) {
    const version = await versionOf(d, target);
    if (version === 'uncacheable') {
      await pass(d, req, res, target, 'bypass', false);
      return true;
    }
    if (!version || version.size <= blockSize) return false;
    if (!ifMatchHolds(req.headers['if-match'], version.etag)) {
      // The version known may be the older one: asked again (the loop's second turn always asks).
      if (attempt === 0) {
        d.cache.objectVersions.delete(target.key);
        continue;
      }
      const status = `${NAME}; fwd=miss; detail=blocks`;
      sendPreconditionFailed(res, 'If-Match', true, status);
      return true;
    }
    const range = parseRange(first(req.headers.range), version.size);
    if (range.kind === 'none') return false;
    if (range.kind === 'unsatisfiable') {
      sendUnsatisfiable(res, version.size, true);
      return true;
    }
    const outcome = await streamBlocks(d, blockSize, res, target, version, range.start, range.end);
    if (outcome === 'sent') return true;
    d.cache.objectVersions.delete(target.key);
    d.log.warn({ url: target.url, etag: version.etag, sent: outcome === 'cut' }, 'object changed or failed during a block read');
    if (outcome === 'cut') {
      cutResponse(res);
      return true;
    }
  }
  return false;
}

/** Whether the range asked is all in stored blocks of a version trusted without asking the store. */
function allCached(cache: Cache, blockSize: number, req: IncomingMessage, target: Target): boolean {
  const v = cache.objectVersions.get(target.key);
  if (!v || Date.now() - v.at >= target.lifetimeS! * 1000) return false;
  const range = parseRange(first(req.headers.range), v.size);
  return range.kind === 'range' && blocksStored(cache, blockSize, target, v, range.start, range.end);
}

function blocksStored(cache: Cache, blockSize: number, target: Target, v: ObjectVersion, start: number, end: number): boolean {
  const span = blockSpan(start, end, blockSize);
  for (let i = span.first; i <= span.last; i++) {
    if (!storedBlock(cache, blockKey(target.key, v.etag, i), v, blockRange(i, blockSize, v.size))) return false;
  }
  return true;
}

/** The version to serve: known and within --s3-revalidate, else asked with one HEAD. */
function versionOf(d: FetchDeps, target: Target): Promise<Known> {
  const known = d.cache.objectVersions.get(target.key);
  if (known && Date.now() - known.at < target.lifetimeS! * 1000) return Promise.resolve(known);
  let inflight = heads.get(d.cache);
  if (!inflight) heads.set(d.cache, (inflight = new Map()));
  let p = inflight.get(target.key);
  if (!p) {
    const map = inflight;
    p = headObject(d, target).finally(() => map.delete(target.key));
    map.set(target.key, p);
  }
  return p;
}

async function headObject(d: FetchDeps, target: Target): Promise<Known> {
  let res: UpstreamResponse;
  const askedAt = performance.now();
  try {
    res = await d.upstreams.request(target.servers, {
      method: 'HEAD',
      path: target.path,
      headers: target.sign!('HEAD', { via: VIA }),
      label: target.label,
    });
  } catch {
    return undefined;
  }
  drainBody(res.body);
  return noteVersion(d.cache, target.key, res.statusCode, res.headers, askedAt);
}

/** Remembers the version a HEAD of an S3 object answered (ours, or a client's passed through). */
export function noteVersion(cache: Cache, key: string, status: number, raw: UpstreamResponse['headers'], askedAt: number): Known {
  const headers = endToEnd(raw as HeaderMap);
  const etag = first(headers.etag);
  const size = Number(first(headers['content-length']));
  if (status !== 200 || !etag || !Number.isSafeInteger(size)) return undefined;
  // The rules of a whole object's answer (s3-rules.ts: no-store, SSE-C) hold for its blocks too.
  if (!s3Decision(status, headers).store) return 'uncacheable';
  const version = { etag, size, headers, at: Date.now() };
  // An answer to a HEAD sent before a write through the gateway may name the version the write
  // replaced or deleted: it serves the request that asked, and is not kept for later ones.
  if (!cache.invalidatedSince(key, askedAt)) cache.objectVersions.set(key, version);
  return version;
}

async function streamBlocks(
  d: FetchDeps,
  blockSize: number,
  res: ServerResponse,
  target: Target,
  v: ObjectVersion,
  start: number,
  end: number,
): Promise<Outcome> {
  const span = blockSpan(start, end, blockSize);
  const cached = blocksStored(d.cache, blockSize, target, v, start, end);
  const status = `${NAME}; ${cached ? 'hit' : 'fwd=miss'}; detail=blocks`;
  noteCacheStatus(res, status);
  const out: Out = { res, headed: false, closed: res.destroyed, head: rangeHeaders(v, start, end, status), onBytes: (n) => d.metrics.bytesOut.inc(n) };
  const onClose = () => {
    out.closed = true;
    out.waiting?.notify();
  };
  res.once('close', onClose);
  let next: Promise<Source> | undefined = acquire(d, target, v, span.first, blockSize);
  try {
    for (let i = span.first; i <= span.last && !out.closed; i++) {
      const source = await next!;
      // One block ahead: it arrives while this one goes out.
      next = i < span.last ? acquire(d, target, v, i + 1, blockSize) : undefined;
      // Awaited in the next turn, or never if this one fails: a rejection must not go unhandled.
      next?.catch(() => undefined);
      const r = blockRange(i, blockSize, v.size);
      const from = Math.max(start, r.start) - r.start;
      const to = Math.min(end, r.end) - r.start;
      if (!(await copyBlock(d.cache, source, out, from, to, i === span.last, v, r))) return out.headed ? 'cut' : 'unsent';
    }
    if (!out.closed) {
      writeHead(out);
      res.end();
    }
    return 'sent';
  } finally {
    res.off('close', onClose);
  }
}

function storedBlock(cache: Cache, key: string, v: ObjectVersion, r: { start: number; end: number }): Found | undefined {
  const f = cache.lookup(key);
  return f && isBlockOf(f.meta.status, f.meta.headers, v, r) ? f : undefined;
}

/** Block `i`: stored, or a fill in flight here or in another worker, or a fill started now. */
async function acquire(d: FetchDeps, target: Target, v: ObjectVersion, i: number, blockSize: number): Promise<Source> {
  const r = blockRange(i, blockSize, v.size);
  const key = blockKey(target.key, v.etag, i);
  const indexRead = d.cache.disk.indexRead();
  if (indexRead && !d.cache.lookup(key)) await indexRead;
  const stored = storedBlock(d.cache, key, v, r);
  if (stored) return { found: stored };
  const { fill, leader } = await d.cache.claim(key);
  if (!leader) {
    d.metrics.collapsed.inc();
    return { fill };
  }
  const meanwhile = d.cache.coordinator ? storedBlock(d.cache, key, v, r) : undefined;
  if (meanwhile) {
    // Another worker stored it while our claim travelled.
    fill.meta = meanwhile.meta;
    fill.finish('revalidated');
    d.cache.endFill(fill);
    return { found: meanwhile };
  }
  d.metrics.misses.inc();
  const headers = target.sign!('GET', { via: VIA, range: `bytes=${r.start}-${r.end}`, 'if-match': v.etag });
  const blockTarget: Target = { ...target, key, block: { ...r, etag: v.etag, size: v.size } };
  runFill(d, fill, { target: blockTarget, headers, clientHeaders: {} })
    .then(() => {
      // A 412 or a mismatched answer is never read by anyone: free its connection.
      if (fill.state === 'pass') dropBody((fill.pass as UpstreamResponse).body);
    })
    .catch((err) => {
      d.log.error({ err, url: target.url }, 'block fill crashed');
      fill.finish('failed', classifyError(err));
      d.cache.endFill(fill);
    });
  return { fill };
}

interface Out {
  readonly res: ServerResponse;
  readonly head: string[];
  readonly onBytes: (n: number) => void;
  headed: boolean;
  closed: boolean;
  /** The fill being waited on, woken when the client leaves. */
  waiting?: Fill;
}

function writeHead(out: Out): void {
  if (out.headed) return;
  out.headed = true;
  out.res.writeHead(206, out.head);
}

/**
 * Sends bytes [from, to] of a block. The final byte of the answer waits until its block's fill
 * has completed and been checked. False when the block failed or changed.
 */
async function copyBlock(
  cache: Cache,
  source: Source,
  out: Out,
  from: number,
  to: number,
  lastBlock: boolean,
  v: ObjectVersion,
  r: { start: number; end: number },
): Promise<boolean> {
  if ('found' in source) return copyStored(source.found, out, from, to);
  const fill = source.fill;
  const state = await fill.headers();
  const fh = state === 'streaming' || state === 'done' ? fill.acquire() : undefined;
  if (!fh) {
    // Done and closed, or stored by another worker meanwhile ('revalidated').
    const found = state === 'done' || state === 'revalidated' ? storedBlock(cache, fill.key, v, r) : undefined;
    return found ? copyStored(found, out, from, to) : false;
  }
  out.waiting = fill;
  try {
    let pos = from;
    while (!out.closed) {
      if (fill.state !== 'streaming' && fill.state !== 'done') return false;
      const done = fill.state === 'done';
      const last = Math.min(done || !lastBlock ? to : to - 1, fill.written - 1);
      if (pos <= last) {
        if (!(await copyFile(fh, out, pos, last))) return false;
        pos = last + 1;
        continue;
      }
      if (pos > to) return true;
      if (done) return false;
      await fill.changed();
    }
    return true;
  } finally {
    out.waiting = undefined;
    fill.release();
  }
}

async function copyStored(found: Found, out: Out, from: number, to: number): Promise<boolean> {
  if (found.tier === 'memory') {
    writeHead(out);
    out.onBytes(to - from + 1);
    if (!out.res.write(found.body.subarray(from, to + 1))) await drained(out.res);
    return true;
  }
  let fh: FileHandle;
  try {
    // Never through a link put in the entry's place, never waiting on a FIFO (disk-files.ts).
    ({ fh } = await openEntryFile(found.path));
  } catch {
    return false;
  }
  try {
    return await copyFile(fh, out, from, to);
  } finally {
    await fh.close().catch(() => undefined);
  }
}

/** Copies bytes [from, to] of a file to the client in adaptive slices. False on a short file. */
async function copyFile(fh: FileHandle, out: Out, from: number, to: number): Promise<boolean> {
  const slicer = new Slicer();
  let pos = from;
  while (pos <= to && !out.closed) {
    const n = Math.min(slicer.size, to - pos + 1);
    const buf = takeSlice(n);
    const { bytesRead } = await fh.read(buf, 0, n, pos);
    if (bytesRead === 0) {
      releaseSlice(buf);
      return false;
    }
    pos += bytesRead;
    out.onBytes(bytesRead);
    writeHead(out);
    const ok = slicer.wrote(out.res.write(buf.subarray(0, bytesRead), () => releaseSlice(buf)));
    if (!ok && !out.closed) await sliceDrained(out.res, slicer, bytesRead);
  }
  return true;
}
