// One GET through an HTTP forward proxy, the way CVMFS clients use a cache: the request line
// carries the absolute URL (`GET http://origin/path HTTP/1.1`) and goes to the proxy's port. No
// CONNECT tunnel, because Squid refuses CONNECT to port 80 and a tunnel would bypass the cache.
// Used by the agent's self-test, discovery's verification and the `discover` client.

import { request } from 'node:http';

export interface ProxyFetchResult {
  readonly ok: boolean;
  readonly status: number;
  /** The body, cut at maxBytes. */
  readonly body: Buffer;
  readonly ms: number;
  /** Why the fetch failed, one line; empty when ok. */
  readonly error: string;
}

export interface ProxyFetchOptions {
  readonly timeoutMs: number;
  /** Test files are small; a cache that streams more is not answering the question asked. */
  readonly maxBytes?: number;
  readonly signal?: AbortSignal;
}

/** Squid's error page for a denied request; a body holding it is a failure whatever the status. */
const ACCESS_DENIED = 'ERR_ACCESS_DENIED';
/** Enough of a refusal's own words to say why, short enough for a page cell or a log line. */
const REASON_CHARS = 160;

/**
 * Why a proxy refused, in its own words: RFC 9209 Proxy-Status (`error=…; details="…"`, as
 * estuary and recent Squid send), else the first text of the body with its HTML tags removed.
 */
export function refusalReason(status: number, proxyStatus: string | undefined, body: Buffer): string {
  if (proxyStatus) {
    const error = /;\s*error=([\w-]+)/.exec(proxyStatus)?.[1];
    const details = /;\s*details="((?:[^"\\]|\\.)*)"/.exec(proxyStatus)?.[1]?.replace(/\\(.)/g, '$1');
    const said = [error, details].filter(Boolean).join(': ');
    if (said) return `HTTP ${status} (${said.slice(0, REASON_CHARS)})`;
  }
  const text = body
    .subarray(0, 16 * 1024)
    .toString('utf8')
    .replace(/<(script|style|head)[^]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return text ? `HTTP ${status}: ${text.slice(0, REASON_CHARS)}` : `HTTP ${status}`;
}

export function proxyFetch(
  proxy: string,
  target: string,
  options: ProxyFetchOptions,
): Promise<ProxyFetchResult> {
  const started = performance.now();
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  return new Promise((resolve) => {
    let settled = false;
    // Declared before finish() can run: an early failure (a URL that does not parse) settles
    // before any request exists, and must not touch a timer in its temporal dead zone.
    let timer: NodeJS.Timeout | undefined = undefined;
    const finish = (status: number, body: Buffer, error: string, proxyStatus?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const denied = body.includes(ACCESS_DENIED);
      const ok = error === '' && status === 200 && !denied;
      const refused = status === 200 ? '' : refusalReason(status, proxyStatus, body);
      const why = error || (denied ? `access denied by the cache${refused ? ` (${refused})` : ''}` : refused);
      resolve({ ok, status, body, ms: performance.now() - started, error: why });
    };
    let p: URL;
    let host: string;
    try {
      p = new URL(proxy);
      host = new URL(target).host;
    } catch {
      finish(0, Buffer.alloc(0), `not a valid URL: ${JSON.stringify(proxy).slice(0, 120)} or the test URL`);
      return;
    }
    let req: ReturnType<typeof request>;
    try {
      req = request({
        host: p.hostname.replace(/^\[|\]$/g, ''),
        port: Number(p.port || 80),
        method: 'GET',
        path: target,
        headers: { host },
        agent: false,
        signal: options.signal,
      });
    } catch (err) {
      finish(0, Buffer.alloc(0), `cannot send the request: ${(err as Error).message}`);
      return;
    }
    timer = setTimeout(() => {
      req.destroy();
      finish(0, Buffer.alloc(0), `no answer within ${options.timeoutMs} ms`);
    }, options.timeoutMs);
    req.on('error', (err) => finish(0, Buffer.alloc(0), (err as NodeJS.ErrnoException).code ?? err.message));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        if (size < maxBytes) chunks.push(c);
        size += c.length;
      });
      const proxyStatus = [res.headers['proxy-status']].flat()[0];
      res.on('end', () => finish(res.statusCode ?? 0, Buffer.concat(chunks).subarray(0, maxBytes), '', proxyStatus));
      res.on('error', (err) => finish(res.statusCode ?? 0, Buffer.alloc(0), err.message));
    });
    req.end();
  });
}
