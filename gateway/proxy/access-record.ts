// What the access log (--access-log, Squid's format) says about a finished request.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AccessRecord } from '../access-log.ts';
import { cacheStatusOf } from './respond.ts';

/** The record of one exchange; the bytes are those the socket sent for it since `sentBefore`. */
export function accessRecord(
  req: IncomingMessage,
  res: ServerResponse,
  socket: IncomingMessage['socket'] | undefined,
  sentBefore: number,
  started: number,
): AccessRecord {
  const url = req.url ?? '';
  const upstreamHost = upstreamHostOf(url, req.headers.host);
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
    contentType: sentType(res),
  };
}

/**
 * The Content-Type the answer carried. An answer whose head was given as a list
 * (`writeHead(status, [...])`: hits, relayed answers) keeps no header table, only the head it wrote.
 */
function sentType(res: ServerResponse): string | undefined {
  const t = res.getHeader('content-type');
  if (typeof t === 'string') return t;
  const head = (res as { _header?: unknown })._header;
  return typeof head === 'string' ? /\r\ncontent-type:[ \t]*([^\r]*)/i.exec(head)?.[1] : undefined;
}

/** The host a request's target names: the absolute URL's, else the Host header's. */
export function upstreamHostOf(url: string, host: string | undefined): string | undefined {
  try {
    return /^[a-z]+:\/\//i.test(url) ? new URL(url).host : host;
  } catch {
    return undefined;
  }
}
