// Pass-through plumbing shared by every path that does not store: the headers a request goes
// upstream with (hop-by-hop removed, X-Forwarded-For and Via added, signed when the target signs),
// and relaying an upstream answer to the client at the client's pace.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { endToEnd, type HeaderMap } from '../http/headers.ts';
import type { Metrics } from '../metrics.ts';
import { classifyError, dropBody, type UpstreamResponse } from '../upstream.ts';
import { cutResponse, NAME, noteCacheStatus, sendError } from './respond.ts';
import type { Target } from './target.ts';

/** Headers for the upstream request; a target that signs (S3) gets them signed for `method`. */
export function upstreamHeaders(
  req: IncomingMessage,
  drop: readonly string[],
  target?: Target,
  method = 'GET',
): Record<string, string | string[]> {
  const h = endToEnd(req.headers as HeaderMap);
  for (const k of drop) delete h[k];
  delete h['x-estuary-peer'];
  const addr = (req.socket?.remoteAddress ?? '').replace(/^::ffff:/, '');
  const xff = req.headers['x-forwarded-for'];
  h['x-forwarded-for'] = xff ? `${Array.isArray(xff) ? xff.join(', ') : xff}, ${addr}` : addr;
  const via = req.headers.via;
  h.via = via ? `${via}, 1.1 ${NAME}` : `1.1 ${NAME}`;
  return target?.sign ? target.sign(method, h) : h;
}

/**
 * Sends an upstream answer on as it is, pausing the upstream while the client's socket is full.
 * The headers go out with the first body byte (or the end): a body that fails before it (a
 * malformed first chunk) is still answered 502 with Proxy-Status, not an empty reply.
 */
export function relay(
  res: ServerResponse,
  up: UpstreamResponse,
  cacheStatus: string,
  metrics: Pick<Metrics, 'bytesIn' | 'bytesOut'>,
  onFailure?: (err: unknown) => void,
): Promise<void> {
  if (res.destroyed) {
    // The client left while we waited for the upstream; free the upstream connection.
    dropBody(up.body);
    return Promise.resolve();
  }
  const headers = endToEnd(up.headers as HeaderMap);
  headers['cache-status'] = cacheStatus;
  noteCacheStatus(res, cacheStatus);
  const writeHead = () => {
    if (!res.headersSent) res.writeHead(up.statusCode, headers);
  };
  if (res.req?.method === 'HEAD') {
    // A HEAD answered from a GET (a fill that passed): its head only; the body is let go unread.
    writeHead();
    res.end();
    dropBody(up.body);
    return Promise.resolve();
  }
  // A 206 without Content-Length (chunked, or ended by a close) says its length in Content-Range:
  // one that ends short or runs long is cut, so the client sees it incomplete. One whose
  // Content-Range cannot be read (two of them, another spelling) cannot be checked and is not
  // passed on; a multipart/byteranges body, without Content-Range, delimits its parts itself.
  const unframed = up.statusCode === 206 && headers['content-length'] === undefined && headers['content-range'] !== undefined;
  let owed = unframed ? rangeLength(headers['content-range']) : undefined;
  if (unframed && owed === undefined) {
    dropBody(up.body);
    onFailure?.(new Error(`upstream sent a 206 without Content-Length whose Content-Range cannot be checked: ${String(headers['content-range'])}`));
    sendError(res, 502, 'http_response_incomplete', 'upstream sent a partial answer whose Content-Range cannot be checked');
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const fail = (err: unknown) => {
      onFailure?.(err);
      const failure = classifyError(err);
      // Cut rather than end: an incomplete body must look incomplete to the client.
      if (res.headersSent) cutResponse(res);
      else sendError(res, failure.status, failure.proxyError, failure.message);
      resolve();
    };
    // A body that failed before this point (waiting in a fill) emits nothing more.
    if (up.body.errored) return fail(up.body.errored);
    up.body.on('data', (chunk: Buffer) => {
      if (owed !== undefined && (owed -= chunk.length) < 0) return void up.body.destroy(new Error('upstream sent more than its Content-Range'));
      metrics.bytesIn.inc(chunk.length);
      metrics.bytesOut.inc(chunk.length);
      writeHead();
      if (!res.write(chunk)) {
        up.body.pause();
        res.once('drain', () => up.body.resume());
      }
    });
    up.body.on('end', () => {
      if (owed !== undefined && owed > 0) return fail(new Error('upstream ended before its Content-Range'));
      writeHead();
      res.end();
      resolve();
    });
    up.body.on('error', fail);
    res.on('close', () => {
      dropBody(up.body);
      resolve();
    });
  });
}

/**
 * The length a single-range `Content-Range: bytes A-B/N` names (the unit in any case, RFC 9110
 * §14.1), or undefined. Offsets past 2^53 are subtracted exactly.
 */
function rangeLength(v: string | string[] | undefined): number | undefined {
  if (typeof v !== 'string') return undefined;
  const m = /^bytes (\d+)-(\d+)\/(?:\d+|\*)$/i.exec(v.trim());
  if (!m) return undefined;
  const n = BigInt(m[2]!) - BigInt(m[1]!) + 1n;
  return n > 0n && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : undefined;
}
