// Answers from stored responses, from either tier: Age and Cache-Status (RFC 9211), ranges, HEAD,
// and 304s to conditional requests. A memory hit is answered in the same turn, with one write.

import type { FileHandle } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Found } from '../cache/cache.ts';
import { openEntryFile } from '../cache/disk-files.ts';
import type { Lent } from '../cache/mapped-bodies.ts';
import type { EntryMeta } from '../cache/entry.ts';
import { first, httpDate } from '../http/headers.ts';
import { entityTags, etagOf, failedPrecondition, ifRangeHolds } from '../http/preconditions.ts';
import { parseRange } from '../http/range.ts';
import { flatHeaders, wholeHead, withoutRange } from './heads.ts';
import { cutResponse, noteCacheStatus, sendPreconditionFailed, sendUnsatisfiable, sliceDrained } from './respond.ts';
import { releaseSlice, Slicer, takeSlice } from './slices.ts';

export interface ServeOptions {
  readonly age: number;
  readonly cacheStatus: string;
  readonly onBytes: (n: number) => void;
  /** An S3 object: errors the gateway answers itself get S3's XML error document. */
  readonly s3?: boolean;
  /** The entry's file turned out shorter than its body while being sent (the answer was cut). */
  readonly onDamaged?: () => void;
}

/** Whether a stored or arriving 200 answers the request's If-None-Match / If-Modified-Since with 304. */
export function notModified(req: IncomingMessage, meta: EntryMeta): boolean {
  if (meta.status !== 200) return false;
  const inm = req.headers['if-none-match'];
  if (inm !== undefined) {
    const etag = etagOf(meta.headers);
    if (etag === undefined) return false;
    const weak = (t: string) => t.replace(/^W\//, '');
    return entityTags(inm).some((t) => t === '*' || weak(t) === weak(etag));
  }
  const ims = req.headers['if-modified-since'];
  if (ims === undefined) return false;
  const since = httpDate(ims);
  const lm = httpDate(meta.headers['last-modified']);
  return since !== undefined && lm !== undefined && lm <= since;
}

export function sendNotModified(res: ServerResponse, meta: EntryMeta, age: number, cacheStatus: string): void {
  res.writeHead(304, [...flatHeaders(meta), 'age', String(age), 'cache-status', cacheStatus]);
  res.end();
}

/** What to send of a stored body, or that the answer went out already (304, 416). */
type Plan = { readonly status: number; readonly headers: readonly string[]; readonly start: number; readonly end: number } | undefined;

/** Writes the 412, 304 or 416 a request gets, or says which status, head and bytes answer it. */
function plan(req: IncomingMessage, res: ServerResponse, meta: EntryMeta, opts: ServeOptions): Plan {
  noteCacheStatus(res, opts.cacheStatus);
  const failed = failedPrecondition(req.headers, meta.status, meta.headers);
  if (failed) {
    sendPreconditionFailed(res, failed, opts.s3 === true, opts.cacheStatus);
    return undefined;
  }
  const conditional = req.headers['if-none-match'] !== undefined || req.headers['if-modified-since'] !== undefined;
  if (conditional && notModified(req, meta)) {
    sendNotModified(res, meta, opts.age, opts.cacheStatus);
    return undefined;
  }
  // A range of a version the client does not hold would splice two versions: the whole body instead.
  const rangeHeader = ifRangeHolds(req.headers, meta.headers) ? req.headers.range : undefined;
  if (rangeHeader === undefined || meta.status !== 200) {
    return { status: meta.status, headers: wholeHead(meta, opts.age, opts.cacheStatus), start: 0, end: meta.size - 1 };
  }
  const range = parseRange(first(rangeHeader), meta.size);
  if (range.kind === 'unsatisfiable') {
    sendUnsatisfiable(res, meta.size, opts.s3 === true, opts.cacheStatus);
    return undefined;
  }
  if (range.kind === 'none') {
    return { status: meta.status, headers: wholeHead(meta, opts.age, opts.cacheStatus), start: 0, end: meta.size - 1 };
  }
  const { start, end } = range;
  const headers = [
    ...withoutRange(flatHeaders(meta)),
    'age',
    String(opts.age),
    'cache-status',
    opts.cacheStatus,
    'content-range',
    `bytes ${start}-${end}/${meta.size}`,
    'content-length',
    String(end - start + 1),
  ];
  return { status: 206, headers, start, end };
}

/** Answers from a body held in memory, in this turn: head and body go out in one write. */
export function serveMemory(
  req: IncomingMessage,
  res: ServerResponse,
  found: Found & { tier: 'memory' },
  opts: ServeOptions,
): void {
  const p = plan(req, res, found.meta, opts);
  if (!p) return;
  // node:http reads the list and keeps nothing of it: one shared head can answer many requests.
  res.writeHead(p.status, p.headers as string[]);
  const length = p.end - p.start + 1;
  if (req.method === 'HEAD' || length <= 0) {
    res.end();
    return;
  }
  opts.onBytes(length);
  const body = found.body;
  res.end(p.start === 0 && length === body.length ? body : body.subarray(p.start, p.end + 1));
}

/**
 * Answers a request without a Range header from a disk entry's body mapped from the page cache
 * (cache/mapped-bodies.ts): the mapped part, then, once the kernel has copied it and the file is
 * seen whole, the last bytes from their copy. A file cut meanwhile (its mapping reads zeros past
 * the cut) cuts the answer instead, so it never looks complete. The loan ends when the answer
 * closes, however it ends: a pipelined answer never sent has no write that would.
 */
export function serveMapped(req: IncomingMessage, res: ServerResponse, meta: EntryMeta, lent: Lent, opts: ServeOptions): void {
  if (res.destroyed || res.closed || req.socket.destroyed) {
    lent.done();
    return;
  }
  res.once('close', lent.done);
  const p = plan(req, res, meta, opts);
  if (!p) return;
  res.writeHead(p.status, p.headers as string[]);
  if (req.method === 'HEAD' || p.end < p.start) {
    res.end();
    return;
  }
  writePieces(res, lent.body, opts.onBytes, () => {
    void lent.intact().then((whole) => {
      if (res.destroyed) return;
      if (whole) {
        // The last bytes go out alone, after the rest: with Nagle's algorithm on (connections
        // handed to workers keep it, which suits one-write answers) they would wait for the
        // client's delayed ACK, 40 ms. Set once per connection.
        req.socket.setNoDelay(true);
        opts.onBytes(lent.tail.length);
        res.end(lent.tail);
        return;
      }
      opts.onDamaged?.();
      res.destroy();
    });
  });
}

/**
 * A mapped body goes out in pieces of this size, all handed to the socket at once (no turn of the
 * event loop between them: the socket never waits for the next), each counted as sent when the
 * kernel has taken it: a client that leaves early is counted what it was sent, not the whole body.
 */
const PIECE = 2 ** 20;

/** Writes `body` to `res` in pieces, then calls `then`; stops quietly once the answer is cut. */
function writePieces(res: ServerResponse, body: Buffer, onBytes: (n: number) => void, then: () => void): void {
  let left = body.length;
  for (let pos = 0; pos < body.length; pos += PIECE) {
    const piece = body.length <= PIECE ? body : body.subarray(pos, Math.min(pos + PIECE, body.length));
    res.write(piece, (err) => {
      if (err || res.destroyed) return;
      onBytes(piece.length);
      left -= piece.length;
      if (left === 0) then();
    });
  }
}

/**
 * Answers from a stored response. Resolves false, having sent nothing, when a disk entry's file
 * vanished (evicted by another worker, removed by hand) or is shorter than its body: the caller
 * then drops the entry and treats the request as a miss.
 */
export async function serveStored(
  req: IncomingMessage,
  res: ServerResponse,
  found: Found,
  opts: ServeOptions,
): Promise<boolean> {
  if (found.tier === 'memory') {
    serveMemory(req, res, found, opts);
    return true;
  }
  const p = plan(req, res, found.meta, opts);
  if (!p) return true;
  if (req.method === 'HEAD' || p.end < p.start) {
    res.writeHead(p.status, p.headers as string[]);
    res.end();
    return true;
  }
  let fh: FileHandle;
  try {
    const opened = await openEntryFile(found.path);
    fh = opened.fh;
    // Cut short by another program: the entry is damaged, and is dropped like a vanished one
    // rather than cut at the same byte on every hit.
    if (opened.size < found.meta.size) {
      await fh.close().catch(() => undefined);
      return false;
    }
  } catch {
    return false;
  }
  if (res.destroyed) {
    await fh.close();
    return true;
  }
  res.writeHead(p.status, p.headers as string[]);
  if (!(await streamFile(fh, res, p.start, p.end, opts.onBytes))) opts.onDamaged?.();
  return true;
}

/**
 * Copies bytes [start, end] of an open file to `res` in adaptive slices; closes the file. False
 * when the file ended before `end` (the response is cut).
 */
async function streamFile(
  fh: FileHandle,
  res: ServerResponse,
  start: number,
  end: number,
  onBytes: (n: number) => void,
): Promise<boolean> {
  const slicer = new Slicer();
  let pos = start;
  try {
    while (pos <= end && !res.destroyed) {
      const n = Math.min(slicer.size, end - pos + 1);
      // The socket may still hold earlier slices in its queue: each goes back to the pool only
      // once written.
      const buf = takeSlice(n);
      const { bytesRead } = await fh.read(buf, 0, n, pos);
      if (bytesRead === 0) {
        releaseSlice(buf);
        cutResponse(res);
        return false;
      }
      pos += bytesRead;
      onBytes(bytesRead);
      const chunk = buf.subarray(0, bytesRead);
      const back = () => releaseSlice(buf);
      if (pos > end) res.end(chunk, back);
      else if (!slicer.wrote(res.write(chunk, back))) await sliceDrained(res, slicer, bytesRead);
    }
  } catch {
    cutResponse(res);
  } finally {
    await fh.close().catch(() => undefined);
  }
  return true;
}
