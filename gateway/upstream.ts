// Upstream connections: one undici Agent (keep-alive pools per origin, bounded timeouts) and the
// failover rule for a ring of equivalent servers. A server that fails is skipped for a back-off
// period so one dead stratum 1 does not cost every request a connect timeout.

import { Agent, type Dispatcher } from 'undici';
import { isPlainHttpAnswer } from '../lib/tls-mismatch.ts';
import type { Metrics } from './metrics.ts';
import { resetAware, resetAwareConnector } from './upstream-reset.ts';

export interface UpstreamOptions {
  readonly connectTimeoutMs: number;
  readonly responseTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly failoverBackoffMs: number;
}

export interface UpstreamRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string | string[]>;
  readonly body?: Dispatcher.DispatchOptions['body'];
  /** Try the next server on a 404 too (CVMFS data: a stratum 1 behind the others answers 404). */
  readonly failoverOn404?: boolean;
  readonly signal?: AbortSignal;
  /**
   * The metric label: a ring name, an --allow-dest entry or 'peer'. Never the origin itself, so
   * a forward proxy asked for a million hosts still exports a bounded number of series.
   */
  readonly label: string;
  /** Interim (1xx) responses, as undici reports them (gateway/proxy/interim.ts). */
  readonly onInfo?: Dispatcher.RequestOptions['onInfo'];
}

export type UpstreamResponse = Dispatcher.ResponseData & { readonly origin: string };

/** Why an upstream attempt failed, in RFC 9209 error types. */
export class UpstreamFailure extends Error {
  readonly proxyError: string;
  readonly status: number;
  /** The origin is fine, only storing failed (disk full): a request may still pass through. */
  readonly passable: boolean;
  constructor(proxyError: string, status: number, message: string, passable = false) {
    super(message);
    this.proxyError = proxyError;
    this.status = status;
    this.passable = passable;
  }
}

export function classifyError(err: unknown): UpstreamFailure {
  if (err instanceof UpstreamFailure) return err;
  const code = (err as { code?: string }).code ?? '';
  const msg = err instanceof Error ? err.message : String(err);
  // An https:// --upstream or --s3 address for a server that speaks plain HTTP.
  if (isPlainHttpAnswer(err)) {
    return new UpstreamFailure('tls_protocol_error', 502, 'the upstream does not speak TLS; use http:// in its URL');
  }
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return new UpstreamFailure('dns_error', 502, `DNS lookup failed: ${msg}`);
    case 'ECONNREFUSED':
      return new UpstreamFailure('connection_refused', 502, `connection refused: ${msg}`);
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new UpstreamFailure('connection_timeout', 504, 'connect timed out');
    case 'UND_ERR_HEADERS_TIMEOUT':
      return new UpstreamFailure('http_response_timeout', 504, 'no response headers in time');
    case 'UND_ERR_BODY_TIMEOUT':
      return new UpstreamFailure('connection_read_timeout', 504, 'upstream stopped sending the body');
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return new UpstreamFailure('destination_unavailable', 502, `unreachable: ${msg}`);
    default:
      return new UpstreamFailure('connection_terminated', 502, `upstream failed: ${msg}`);
  }
}

function ignore(): void {}

/**
 * Reads an unwanted body to its end so the connection can be reused. Destroying or draining an
 * undici body can emit an error (the upstream cut it, or RequestAbortedError): without a listener
 * that error would end the process, so every discard listens first.
 */
export function drainBody(body: UpstreamResponse['body']): void {
  body.on('error', ignore);
  body.resume();
}

/** Frees an upstream connection whose body nobody will read. */
export function dropBody(body: UpstreamResponse['body']): void {
  body.on('error', ignore);
  if (!body.destroyed) body.destroy();
}

/**
 * A server may close a kept-alive connection whenever it is idle (Apache's KeepAliveTimeout and
 * MaxKeepAliveRequests, nginx's keepalive_timeout), also just as a request goes out on it. Such a
 * request never reached the server, and a GET or HEAD is sent again on another connection, as
 * RFC 9112 §9.3.1 allows. Twice at most: the pool may hold another connection closed the same way.
 */
const RESEND_LIMIT = 2;

function closedWhileIdle(err: unknown, req: UpstreamRequest): boolean {
  if (req.body !== undefined || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
  const code = (err as { code?: string }).code;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE';
}

/** An upstream's last failure still unanswered, and when it happened (ms). */
export interface UpstreamError {
  readonly message: string;
  readonly at: number;
}

export class Upstreams {
  readonly agent: Agent;
  /** The agent, with a reset that ends a close-delimited body turned into an error. */
  readonly #dispatcher: Dispatcher;
  readonly #opts: UpstreamOptions;
  readonly #metrics: Metrics;
  readonly #downUntil = new Map<string, number>();
  /** The last failure of each label still unanswered, in this process. */
  readonly lastError = new Map<string, UpstreamError>();

  constructor(opts: UpstreamOptions, metrics: Metrics) {
    this.#opts = opts;
    this.#metrics = metrics;
    this.agent = new Agent({
      connect: resetAwareConnector(opts.connectTimeoutMs),
      headersTimeout: opts.responseTimeoutMs,
      bodyTimeout: opts.idleTimeoutMs,
      keepAliveTimeout: 30_000,
      // Pipelining stays off: one slow response must not hold up others behind it.
      pipelining: 1,
      // undici 8 negotiates HTTP/2 over TLS by default. The proxy's header handling (hop-by-hop
      // fields, Connection tokens, close-delimited bodies) is written for HTTP/1.1 upstreams.
      allowH2: false,
    });
    this.#dispatcher = this.agent.compose(resetAware);
    // undici keeps one pool per origin and drops it when its last connection closes or fails
    // (lib/dispatcher/agent.js): a million origins asked once cost nothing once they are answered.
    metrics.upstreamPools = () => this.pools;
  }

  /** Connection pools the agent holds now, one per origin in use (`stats` has one key per pool). */
  get pools(): number {
    return Object.keys(this.agent.stats).length;
  }

  /** Servers in the order to try: healthy ones first, in configured order. */
  order(servers: readonly string[]): string[] {
    const now = Date.now();
    const up = servers.filter((s) => (this.#downUntil.get(s) ?? 0) <= now);
    const down = servers.filter((s) => (this.#downUntil.get(s) ?? 0) > now);
    return [...up, ...down];
  }

  /**
   * Sends the request to the first server that answers; on a network error, a 5xx (or a 404
   * with failoverOn404) it tries the next one. The last server's answer is returned as it is.
   */
  async request(servers: readonly string[], req: UpstreamRequest): Promise<UpstreamResponse> {
    const order = this.order(servers);
    let lastFailure: UpstreamFailure | undefined;
    let resent = 0;
    for (let i = 0; i < order.length; i++) {
      const origin = order[i]!;
      const last = i === order.length - 1;
      const started = performance.now();
      try {
        const res = await this.#dispatcher.request({
          origin,
          path: req.path,
          method: req.method as Dispatcher.HttpMethod,
          headers: req.headers,
          body: req.body,
          signal: req.signal,
          onInfo: req.onInfo,
        });
        this.#metrics.upstreamLatency.labels(req.label).observe((performance.now() - started) / 1000);
        const retryable = res.statusCode >= 500 || (req.failoverOn404 === true && res.statusCode === 404);
        this.#note(req.label, res.statusCode < 500);
        if (retryable && !last && req.body === undefined) {
          this.#metrics.upstreamErrors.labels(req.label, `status_${res.statusCode}`).inc();
          this.#markDown(origin, order.length);
          drainBody(res.body);
          continue;
        }
        return Object.assign(res, { origin });
      } catch (err) {
        if (req.signal?.aborted) throw err;
        if (closedWhileIdle(err, req) && resent < RESEND_LIMIT) {
          resent++;
          i--;
          continue;
        }
        lastFailure = classifyError(err);
        this.#note(req.label, false, lastFailure.message);
        this.#metrics.upstreamErrors.labels(req.label, lastFailure.proxyError).inc();
        this.#markDown(origin, order.length);
        if (req.body !== undefined) break; // a consumed request body cannot be sent again
      }
    }
    throw lastFailure ?? new UpstreamFailure('destination_unavailable', 502, 'no upstream server to try');
  }

  /** When each label last answered or failed, for the status page (labels are bounded by the configuration). */
  #note(label: string, ok: boolean, error?: string): void {
    const now = Date.now();
    (ok ? this.#metrics.upstreamLastSuccess : this.#metrics.upstreamLastFailure).set({ upstream: label }, now / 1000);
    if (ok) this.lastError.delete(label);
    else this.lastError.set(label, { message: error ?? 'answered 5xx', at: now });
  }

  /**
   * Remembers a failed server so the next requests try its ring's others first. Only servers of a
   * ring (more than one to choose from) are remembered: that bounds this map by the configuration,
   * whatever destinations forward-proxy clients ask for.
   */
  #markDown(origin: string, choices: number): void {
    if (choices < 2) return;
    this.#downUntil.set(origin, Date.now() + this.#opts.failoverBackoffMs);
  }

  /** Servers currently tried last (for tests and the admin stats). */
  get downCount(): number {
    return this.#downUntil.size;
  }

  /** Servers of rings skipped now after a failure (this process's view), for the status page. */
  downServers(now = Date.now()): string[] {
    return [...this.#downUntil].filter(([, until]) => until > now).map(([s]) => s);
  }

  markUp(origin: string): void {
    this.#downUntil.delete(origin);
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => undefined);
  }

  destroy(): void {
    this.agent.destroy().catch(() => undefined);
  }
}
