// Writing responses: errors the gateway itself generates (with Proxy-Status, RFC 9209), stored
// responses from either tier (with Age, Cache-Status (RFC 9211), ranges, HEAD, 304s to
// conditional requests), and bodies streamed out of a fill at the reader's own pace.

import { type FileHandle, open } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Found } from '../cache/cache.ts';
import type { EntryMeta } from '../cache/entry.ts';
import type { Fill } from '../cache/fill.ts';
import { currentAge } from '../cache/freshness.ts';
import { first, httpDate, listItems } from '../http/headers.ts';
import { wholeBodyOnly } from '../http/partial.ts';
import { parseRange } from '../http/range.ts';
import { releaseSlice, Slicer, takeSlice } from './slices.ts';

export const NAME = 'estuary';

export function proxyStatus(error: string, details: string): string {
  return `${NAME}; error=${error}; details="${details.replace(/[\\"]/g, '\\$&').replace(/[^\x20-\x7e]/g, '?')}"`;
}

/** How long a cut connection may take to pass on the bytes queued before it is reset. */
const CUT_FLUSH_MS = 2000;

/**
 * Ends a response whose body broke after its headers went out. A body with a length or chunked
 * framing is visibly short when the connection closes. A close-delimited one (an HTTP/1.0
 * client, no Content-Length) would read as complete on an orderly close: its connection is reset
 * (RST) instead, once the bytes already queued have gone out.
 */
export function cutResponse(res: ServerResponse): void {
  const socket = res.socket;
  // Headers given to writeHead() as an object are not kept for getHeader(): the head as sent
  // (node:http's `_header`) says whether it carried a Content-Length.
  const sent = (res as unknown as { _header?: string | null })._header ?? '';
  const delimited = res.chunkedEncoding || /\r\ncontent-length:/i.test(sent) || res.hasHeader('content-length');
  if (delimited || !socket || socket.destroyed) {
    res.destroy();
    return;
  }
  const reset = () => {
    clearTimeout(timer);
    if (!socket.destroyed) socket.resetAndDestroy();
  };
  const timer = setTimeout(reset, CUT_FLUSH_MS);
  if (socket.writableLength === 0) reset();
  else socket.once('drain', reset);
}

/** Ends the exchange with an error the gateway generated. After headers went out, cuts the connection. */
export function sendError(res: ServerResponse, status: number, error: string, message: string): void {
  if (res.headersSent) {
    cutResponse(res);
    return;
  }
  const body = `${message}\n`;
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'proxy-status': proxyStatus(error, message),
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

/** The Cache-Status each response went out with, for the access log (headers written as arrays are not readable back). */
const sentStatus = new WeakMap<ServerResponse, string>();

export function noteCacheStatus(res: ServerResponse, value: string): void {
  sentStatus.set(res, value);
}

export function cacheStatusOf(res: ServerResponse): string | undefined {
  return sentStatus.get(res);
}

const flatCache = new WeakMap<EntryMeta, string[]>();

/** Stored headers as a flat [name, value, ...] list, computed once per entry for the hit path. */
function flatHeaders(meta: EntryMeta): string[] {
  let flat = flatCache.get(meta);
  if (!flat) {
    flat = [];
    for (const [k, v] of Object.entries(meta.headers)) {
      if (k === 'content-length' || k === 'age' || k === 'accept-ranges') continue;
      if (Array.isArray(v)) for (const x of v) flat.push(k, x);
      else flat.push(k, v);
    }
    flat.push('accept-ranges', 'bytes');
    flatCache.set(meta, flat);
  }
  return flat;
}

/**
 * A range cut from the body: the stored Content-Range (RFC 9110 §14.4) gives way to the range's
 * own, and digests of the whole body (S3's x-amz-checksum-*) are left off (http/partial.ts).
 */
function withoutRange(flat: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < flat.length; i += 2) if (!wholeBodyOnly(flat[i]!)) out.push(flat[i]!, flat[i + 1]!);
  return out;
}

export function forgetHeaders(meta: EntryMeta): void {
  flatCache.delete(meta);
}

function notModified(req: IncomingMessage, meta: EntryMeta): boolean {
  if (meta.status !== 200) return false;
  const inm = req.headers['if-none-match'];
  if (inm !== undefined) {
    const etag = first(meta.headers.etag);
    if (etag === undefined) return false;
    const weak = (t: string) => t.replace(/^W\//, '');
    return listItems(inm).some((t) => t === '*' || weak(t) === weak(etag));
  }
  const ims = httpDate(req.headers['if-modified-since']);
  const lm = httpDate(meta.headers['last-modified']);
  return ims !== undefined && lm !== undefined && lm <= ims;
}

export interface ServeOptions {
  readonly age: number;
  readonly cacheStatus: string;
  readonly onBytes: (n: number) => void;
  /** An S3 object: errors the gateway answers itself get S3's XML error document. */
  readonly s3?: boolean;
}

/**
 * 416 for a range that starts beyond the body (an empty object has no satisfiable range). S3
 * clients branch on the error code, so an S3 object gets S3's `InvalidRange` document.
 */
export function sendUnsatisfiable(res: ServerResponse, size: number, s3: boolean, cacheStatus?: string): void {
  const body = s3
    ? '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InvalidRange</Code>' +
      `<Message>The requested range is not satisfiable</Message><ActualObjectSize>${size}</ActualObjectSize></Error>`
    : '';
  const headers: Record<string, string | number> = { 'content-range': `bytes */${size}`, 'content-length': Buffer.byteLength(body) };
  if (s3) headers['content-type'] = 'application/xml';
  if (cacheStatus) headers['cache-status'] = cacheStatus;
  res.writeHead(416, headers);
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

/**
 * Answers from a stored response. Resolves false, having sent nothing, when a disk entry's file
 * vanished (evicted by another worker, removed by hand): the caller then treats it as a miss.
 */
export async function serveStored(
  req: IncomingMessage,
  res: ServerResponse,
  found: Found,
  opts: ServeOptions,
): Promise<boolean> {
  const { meta } = found;
  const base = flatHeaders(meta);
  sentStatus.set(res, opts.cacheStatus);
  if (notModified(req, meta)) {
    res.writeHead(304, [...base, 'age', String(opts.age), 'cache-status', opts.cacheStatus]);
    res.end();
    return true;
  }
  let start = 0;
  let end = meta.size - 1;
  let status = meta.status;
  const extra = ['age', String(opts.age), 'cache-status', opts.cacheStatus];
  const range =
    meta.status === 200 ? parseRange(first(req.headers.range), meta.size) : { kind: 'none' as const };
  if (range.kind === 'unsatisfiable') {
    sendUnsatisfiable(res, meta.size, opts.s3 === true, opts.cacheStatus);
    return true;
  }
  if (range.kind === 'range') {
    start = range.start;
    end = range.end;
    status = 206;
    extra.push('content-range', `bytes ${start}-${end}/${meta.size}`);
  }
  const length = end - start + 1;
  const own = status === 206 ? withoutRange(base) : base;
  const headers = [...own, ...extra, 'content-length', String(length)];
  if (req.method === 'HEAD' || length === 0) {
    res.writeHead(status, headers);
    res.end();
    return true;
  }
  if (found.tier === 'memory') {
    res.writeHead(status, headers);
    opts.onBytes(length);
    res.end(start === 0 && length === found.body.length ? found.body : found.body.subarray(start, end + 1));
    return true;
  }
  let fh: FileHandle;
  try {
    fh = await open(found.path, 'r');
  } catch {
    return false;
  }
  if (res.destroyed) {
    await fh.close();
    return true;
  }
  res.writeHead(status, headers);
  await streamFile(fh, res, start, end, opts.onBytes);
  return true;
}

/** Copies bytes [start, end] of an open file to `res` in adaptive slices; closes the file. */
async function streamFile(
  fh: FileHandle,
  res: ServerResponse,
  start: number,
  end: number,
  onBytes: (n: number) => void,
): Promise<void> {
  const slicer = new Slicer();
  let pos = start;
  try {
    while (pos <= end && !res.destroyed) {
      const n = Math.min(slicer.size, end - pos + 1);
      // The socket may still hold earlier slices in its queue: each goes back to the pool only
      // once written.
      const buf = takeSlice(n);
      const { bytesRead } = await fh.read(buf, 0, n, pos);
      if (bytesRead === 0) throw new Error('cache file shorter than its entry');
      pos += bytesRead;
      onBytes(bytesRead);
      const chunk = buf.subarray(0, bytesRead);
      const back = () => releaseSlice(buf);
      if (pos > end) res.end(chunk, back);
      else if (!slicer.wrote(res.write(chunk, back))) await drained(res);
    }
  } catch {
    cutResponse(res);
  } finally {
    await fh.close().catch(() => undefined);
  }
}

/** Response headers for a body still being filled. */
export function fillHeaders(
  fill: Fill,
  req: IncomingMessage,
  cacheStatus: string,
): { status: number; headers: string[]; start: number; end: number } | { status: 416 } {
  const meta = fill.meta!;
  const base = flatHeaders(meta);
  // The origin's Age and the time in flight count from the first byte (RFC 9111 §4.2.3).
  const extra = ['age', String(currentAge(meta, Date.now())), 'cache-status', cacheStatus];
  let start = 0;
  let end = fill.length === undefined ? Number.POSITIVE_INFINITY : fill.length - 1;
  let status = meta.status;
  if (fill.length !== undefined && meta.status === 200) {
    const range = parseRange(first(req.headers.range), fill.length);
    if (range.kind === 'unsatisfiable') return { status: 416 };
    if (range.kind === 'range') {
      start = range.start;
      end = range.end;
      status = 206;
      extra.push('content-range', `bytes ${start}-${end}/${fill.length}`);
    }
  }
  if (fill.length !== undefined) extra.push('content-length', String(end - start + 1));
  return { status, headers: [...(status === 206 ? withoutRange(base) : base), ...extra], start, end };
}

/**
 * Copies bytes [start, end] of a fill to `res` as they land. Holds back the final byte until the
 * fill is complete and verified; on a failed fill cuts the connection so the client sees an error.
 *
 * The status line and headers go out with the first body byte, not before: a fill that fails
 * before that (origin cut, disk full) leaves the response untouched, resolves 'unsent', and the
 * caller can still answer with an error status or pass the request through.
 */
export async function streamFill(
  fill: Fill,
  fh: FileHandle,
  res: ServerResponse,
  head: { readonly status: number; readonly headers: string[]; readonly start: number; readonly end: number },
  onBytes: (n: number) => void,
): Promise<'sent' | 'unsent'> {
  const { start, end } = head;
  let headed = false;
  const writeHead = () => {
    if (headed) return;
    headed = true;
    res.writeHead(head.status, head.headers);
  };
  // A client that left while the fill was starting never emits 'close' again.
  let closed = res.destroyed;
  const onClose = () => {
    closed = true;
    fill.notify();
  };
  res.once('close', onClose);
  let pos = start;
  const slicer = new Slicer();
  // Cursor into fill.chunks: the chunk holding `pos` and the offset where that chunk starts.
  let idx = 0;
  let chunkStart = 0;
  try {
    while (!closed) {
      if (fill.state === 'failed') {
        if (!headed) return 'unsent';
        cutResponse(res);
        return 'sent';
      }
      const done = fill.state === 'done';
      const last = done ? Math.min(end, fill.written - 1) : Math.min(end - 1, fill.written - 1);
      if (pos <= last && fill.chunks) {
        const chunks = fill.chunks;
        while (chunkStart + chunks[idx]!.length <= pos) chunkStart += chunks[idx++]!.length;
        const chunk = chunks[idx]!;
        const from = pos - chunkStart;
        const to = Math.min(chunk.length, last - chunkStart + 1);
        pos += to - from;
        onBytes(to - from);
        writeHead();
        const ok = res.write(from === 0 && to === chunk.length ? chunk : chunk.subarray(from, to));
        if (!ok && !closed) await drained(res);
        continue;
      }
      if (pos <= last) {
        const n = Math.min(slicer.size, last - pos + 1);
        const buf = takeSlice(n);
        const { bytesRead } = await fh.read(buf, 0, n, pos);
        if (bytesRead === 0) {
          releaseSlice(buf);
          throw new Error('cache file shorter than written');
        }
        pos += bytesRead;
        onBytes(bytesRead);
        writeHead();
        const ok = slicer.wrote(res.write(buf.subarray(0, bytesRead), () => releaseSlice(buf)));
        if (!ok && !closed) await drained(res);
        continue;
      }
      if (done) {
        writeHead();
        res.end();
        return 'sent';
      }
      await fill.changed();
    }
    return 'sent';
  } catch {
    if (!headed) return 'unsent';
    cutResponse(res);
    return 'sent';
  } finally {
    res.off('close', onClose);
    fill.release();
  }
}

export function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed) {
      resolve();
      return;
    }
    const finish = () => {
      res.off('drain', finish);
      res.off('close', finish);
      resolve();
    };
    res.on('drain', finish);
    res.on('close', finish);
  });
}
