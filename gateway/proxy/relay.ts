// Pass-through plumbing shared by every path that does not store: the headers a request goes
// upstream with (hop-by-hop removed, X-Forwarded-For and Via added, signed when the target signs),
// and relaying an upstream answer to the client at the client's pace.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { endToEnd, type HeaderMap } from '../http/headers.ts';
import type { Metrics } from '../metrics.ts';
import { dropBody, type UpstreamResponse } from '../upstream.ts';
import { cutResponse, NAME, noteCacheStatus } from './respond.ts';
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

/** Sends an upstream answer on as it is, pausing the upstream while the client's socket is full. */
export function relay(
  res: ServerResponse,
  up: UpstreamResponse,
  cacheStatus: string,
  metrics: Pick<Metrics, 'bytesIn' | 'bytesOut'>,
): Promise<void> {
  if (res.destroyed) {
    // The client left while we waited for the upstream; free the upstream connection.
    dropBody(up.body);
    return Promise.resolve();
  }
  const headers = endToEnd(up.headers as HeaderMap);
  headers['cache-status'] = cacheStatus;
  noteCacheStatus(res, cacheStatus);
  res.writeHead(up.statusCode, headers);
  return new Promise((resolve) => {
    up.body.on('data', (chunk: Buffer) => {
      metrics.bytesIn.inc(chunk.length);
      metrics.bytesOut.inc(chunk.length);
      if (!res.write(chunk)) {
        up.body.pause();
        res.once('drain', () => up.body.resume());
      }
    });
    up.body.on('end', () => {
      res.end();
      resolve();
    });
    up.body.on('error', () => {
      // Cut rather than end: an incomplete body must look incomplete to the client.
      cutResponse(res);
      resolve();
    });
    res.on('close', () => {
      dropBody(up.body);
      resolve();
    });
  });
}
