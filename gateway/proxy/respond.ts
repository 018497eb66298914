// Writing responses: errors the gateway itself generates (with Proxy-Status, RFC 9209), and
// bodies streamed out of a fill at the reader's own pace (stored responses: hit.ts).

import type { FileHandle } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Fill } from '../cache/fill.ts';
import { currentAge } from '../cache/freshness.ts';
import { first } from '../http/headers.ts';
import type { FailedCondition } from '../http/preconditions.ts';
import { ifRangeHolds } from '../http/preconditions.ts';
import { parseRange } from '../http/range.ts';
import { flatHeaders, withoutRange } from './heads.ts';
import { releaseSlice, Slicer, takeSlice } from './slices.ts';
import { s3ErrorXml } from '../http/xml.ts';

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

/**
 * The Cache-Status each response went out with, for the access log (headers written as arrays
 * are not readable back). A property of the response rather than a WeakMap entry: a WeakMap set
 * per request costs every young-generation collection an ephemeron to trace.
 */
const SENT_STATUS = Symbol('estuary.cacheStatus');
type Noted = ServerResponse & { [SENT_STATUS]?: string };

export function noteCacheStatus(res: ServerResponse, value: string): void {
  (res as Noted)[SENT_STATUS] = value;
}

export function cacheStatusOf(res: ServerResponse): string | undefined {
  return (res as Noted)[SENT_STATUS];
}

/**
 * 416 for a range that starts beyond the body (an empty object has no satisfiable range). S3
 * clients branch on the error code, so an S3 object gets S3's `InvalidRange` document.
 */
export function sendUnsatisfiable(res: ServerResponse, size: number, s3: boolean, cacheStatus?: string): void {
  const body = s3
    ? s3ErrorXml('InvalidRange', 'The requested range is not satisfiable', { ActualObjectSize: size })
    : '';
  const headers: Record<string, string | number> = { 'content-range': `bytes */${size}`, 'content-length': Buffer.byteLength(body) };
  if (s3) headers['content-type'] = 'application/xml';
  if (cacheStatus) headers['cache-status'] = cacheStatus;
  res.writeHead(416, headers);
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

/**
 * 412 for a precondition the response the gateway holds fails (http/preconditions.ts). An S3
 * object gets S3's `PreconditionFailed` document, which S3 clients branch on.
 */
export function sendPreconditionFailed(res: ServerResponse, condition: FailedCondition, s3: boolean, cacheStatus: string): void {
  noteCacheStatus(res, cacheStatus);
  const body = s3
    ? s3ErrorXml('PreconditionFailed', 'At least one of the pre-conditions you specified did not hold', { Condition: condition })
    : `precondition failed: ${condition}\n`;
  res.writeHead(412, {
    'content-type': s3 ? 'application/xml' : 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-status': cacheStatus,
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
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
    const asked = ifRangeHolds(req.headers, meta.headers) ? first(req.headers.range) : undefined;
    const range = parseRange(asked, fill.length);
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
        if (!ok && !closed) await sliceDrained(res, slicer, bytesRead);
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

/** Waits for a queued slice of `bytes` to drain, and tells the slicer how long that took. */
export async function sliceDrained(res: ServerResponse, slicer: Slicer, bytes: number): Promise<void> {
  const started = performance.now();
  await drained(res);
  slicer.drained(bytes, performance.now() - started);
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
