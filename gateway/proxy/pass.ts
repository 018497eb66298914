// Requests that are neither answered from the cache nor shared: one upstream request each, its
// answer relayed as it is. Unsafe methods invalidate what they changed (RFC 9111 §4.4); requests
// owned by a peer gateway (consistent hashing) go to that peer.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { invalidatedKeys } from '../cache/invalidation.ts';
import type { HashRing } from '../ring.ts';
import { classifyError, type UpstreamResponse } from '../upstream.ts';
import { noteVersion } from './blocks.ts';
import type { FetchDeps } from './fetcher.ts';
import { forwardInterim } from './interim.ts';
import { relay, upstreamHeaders } from './relay.ts';
import { NAME, sendError } from './respond.ts';
import type { Target } from './target.ts';

export interface PassDeps extends FetchDeps {
  readonly peers?: { readonly ring: HashRing; readonly self: string };
}

const CACHEABLE = new Set(['GET', 'HEAD']);

/** Whether the request carries a body (RFC 9112 §6.3: Content-Length or Transfer-Encoding). */
function hasBodyHeaders(req: IncomingMessage): boolean {
  return req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
}

export function relayUpstream(d: PassDeps, res: ServerResponse, up: UpstreamResponse, cacheStatus: string): Promise<void> {
  const failed = (err: unknown) =>
    d.log.warn({ url: res.req?.url, err: String(err) }, 'upstream failed; response not completed');
  return relay(res, up, cacheStatus, d.metrics, failed);
}

/**
 * Not stored, not shared: this request alone goes upstream and its answer goes back as it is.
 * `noteHead`: a HEAD of an S3 object, whose answer tells block reads the object's version.
 */
export async function pass(
  d: PassDeps,
  req: IncomingMessage,
  res: ServerResponse,
  target: Target,
  fwd: string,
  unsafe: boolean,
  noteHead = false,
): Promise<void> {
  // Every method but GET and HEAD (refused with a body) forwards the body it has, OPTIONS too
  // (RFC 9110 §9.3.7). A request without body headers has none (and starts ended, server.ts).
  const withBody = !CACHEABLE.has(req.method ?? '') && hasBodyHeaders(req);
  // A client that leaves before the upstream answered takes its upstream request with it.
  const gone = new AbortController();
  const onClose = () => gone.abort();
  res.once('close', onClose);
  let up: UpstreamResponse;
  const askedAt = performance.now();
  try {
    up = await d.upstreams.request(target.servers, {
      method: req.method ?? 'GET',
      path: target.path,
      headers: upstreamHeaders(req, ['host', 'expect'], target, req.method ?? 'GET'),
      body: withBody ? req : undefined,
      signal: gone.signal,
      label: target.label,
      onInfo: (info) => forwardInterim(res, info),
    });
  } catch (err) {
    if (gone.signal.aborted) return;
    const f = classifyError(err);
    d.log.warn({ url: target.url, reason: f.proxyError, err: f.message }, 'upstream failed');
    return sendError(res, f.status, f.proxyError, f.message);
  } finally {
    res.off('close', onClose);
  }
  if (unsafe && up.statusCode < 400) {
    const locations = [up.headers.location, up.headers['content-location']];
    // Answered only once no worker can serve what the write replaced (docs/CACHING.md).
    await d.cache.invalidateAll(invalidatedKeys(target, req.headers.host, locations));
  }
  if (noteHead) {
    noteVersion(d.cache, target.key, up.statusCode, up.headers, askedAt);
    // The store says the object is gone: its stored copy is dropped in every worker, so it is
    // not served again, not even stale when the store fails later (contradicted.ts), and so is
    // the version every worker trusts for block reads, which no index here can tell of (an
    // object read only in ranges is stored as blocks under other keys).
    if (up.statusCode === 404 || up.statusCode === 410) await d.cache.invalidate(target.key);
  }
  return relayUpstream(d, res, up, `${NAME}; fwd=${fwd}`);
}

/** Consistent hashing: the owning peer fetches and caches; we relay. False when the peer is down. */
export async function viaPeer(d: PassDeps, req: IncomingMessage, res: ServerResponse, peer: string): Promise<boolean> {
  const headers = upstreamHeaders(req, ['expect']);
  headers['x-estuary-peer'] = d.peers!.self;
  if (req.url?.startsWith('/') && req.headers.host) headers.host = req.headers.host;
  let up: UpstreamResponse;
  try {
    up = await d.upstreams.request([peer], {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers,
      body: CACHEABLE.has(req.method ?? '') || !hasBodyHeaders(req) ? undefined : req,
      label: 'peer',
      onInfo: (info) => forwardInterim(res, info),
    });
  } catch (err) {
    d.log.warn({ peer, err: classifyError(err).message }, 'peer unavailable; handling locally');
    if (CACHEABLE.has(req.method ?? '')) return false;
    sendError(res, 502, 'destination_unavailable', 'peer unavailable');
    return true;
  }
  const status = up.headers['cache-status'];
  await relayUpstream(d, res, up, `${status ? `${status}, ` : ''}${NAME}; fwd=miss; detail=peer`);
  return true;
}
