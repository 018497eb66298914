// A close-delimited body (HTTP/1.0, or HTTP/1.1 with neither Content-Length nor chunked) ends
// when its connection ends. An orderly close (FIN) is that end; a reset (RST: the origin aborting,
// a firewall or load balancer dropping the flow) is not: RFC 9112 §8 makes a message whose
// connection fails incomplete. undici 8 completes such a response on ECONNRESET all the same
// (client-h1.js onHttpSocketError: it finishes the parser, as it does on 'end'), so the gateway
// would store and serve the truncated body as a whole object.
//
// undici finishes the response synchronously inside the socket's 'error' event. Our connector
// adds its own 'error' listener before undici's, which marks "a reset is being handled" until the
// current emit is over (a microtask), and the handler wrapper turns a response end seen during
// that window into an error, so the body stream fails instead of ending.

import type { Socket } from 'node:net';
import { buildConnector, type Dispatcher } from 'undici';

let resetting = false;

export class UpstreamResetError extends Error {
  readonly code = 'ECONNRESET';
  constructor() {
    super('upstream reset the connection before the body ended');
  }
}

function watchReset(socket: Socket): void {
  socket.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'ECONNRESET') return;
    resetting = true;
    queueMicrotask(() => {
      resetting = false;
    });
  });
}

/** What undici's HTTP/1.1 parser (client-h1.js) exposes that the end handler below needs. */
interface H1Parser {
  statusCode: number;
  paused: boolean;
  shouldKeepAlive: boolean;
  finish(): Error | null;
}

function parserOf(socket: Socket): H1Parser | undefined {
  const key = Object.getOwnPropertySymbols(socket).find((k) => k.description === 'parser');
  return key ? ((socket as unknown as Record<symbol, H1Parser | null>)[key] ?? undefined) : undefined;
}

/**
 * undici 8.12.4 drains a parser paused by backpressure on the server's FIN only for responses
 * that are not kept alive (client-h1.js onHttpSocketEnd): a kept-alive Content-Length or chunked
 * body followed at once by the close loses its buffered tail ("other side closed"). This runs
 * before undici's own 'end' listener and does for that case what undici does for the other:
 * Parser.finish() feeds the buffered bytes through the parser, which completes the response
 * when they are all there and reports an error (the length mismatch, a cut chunk) when not.
 */
function drainOnEnd(socket: Socket): void {
  socket.on('end', () => {
    const parser = parserOf(socket);
    if (!parser || !parser.statusCode || !parser.paused || !parser.shouldKeepAlive) return;
    const err = parser.finish();
    if (err) socket.destroy(err);
  });
}

/** undici's own connector, with each new socket watched for resets and for an end while paused. */
export function resetAwareConnector(timeoutMs: number): buildConnector.connector {
  const base = buildConnector({ timeout: timeoutMs });
  return (opts, callback) =>
    base(opts, (err, socket) => {
      if (socket) {
        watchReset(socket as Socket);
        drainOnEnd(socket as Socket);
      }
      // undici's callback type is a union of (err, null) and (null, socket)
      (callback as (e: Error | null, s: typeof socket) => void)(err, socket);
    });
}

type Handler = Dispatcher.DispatchHandler;
type Controller = Parameters<NonNullable<Handler['onResponseEnd']>>[0];

/** Passes everything through, except a response end caused by a reset, which becomes an error. */
class ResetAwareHandler implements Handler {
  readonly #inner: Handler;
  constructor(inner: Handler) {
    this.#inner = inner;
  }
  onRequestStart(...a: Parameters<NonNullable<Handler['onRequestStart']>>) {
    return this.#inner.onRequestStart?.(...a);
  }
  onRequestUpgrade(...a: Parameters<NonNullable<Handler['onRequestUpgrade']>>) {
    return this.#inner.onRequestUpgrade?.(...a);
  }
  onResponseStart(...a: Parameters<NonNullable<Handler['onResponseStart']>>) {
    return this.#inner.onResponseStart?.(...a);
  }
  onResponseData(...a: Parameters<NonNullable<Handler['onResponseData']>>) {
    return this.#inner.onResponseData?.(...a);
  }
  onResponseEnd(controller: Controller, trailers: Parameters<NonNullable<Handler['onResponseEnd']>>[1]) {
    if (resetting) return this.#inner.onResponseError?.(controller, new UpstreamResetError());
    return this.#inner.onResponseEnd?.(controller, trailers);
  }
  onResponseError(...a: Parameters<NonNullable<Handler['onResponseError']>>) {
    return this.#inner.onResponseError?.(...a);
  }
}

/** An interceptor for `Dispatcher.compose`. */
export const resetAware: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) =>
  dispatch(opts, new ResetAwareHandler(handler));
