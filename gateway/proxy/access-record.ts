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
