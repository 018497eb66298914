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

export function proxyFetch(
  proxy: string,
  target: string,
  options: ProxyFetchOptions,
): Promise<ProxyFetchResult> {
  const started = performance.now();
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (status: number, body: Buffer, error: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const denied = body.includes(ACCESS_DENIED);
      const ok = error === '' && status === 200 && !denied;
      const why = error || (denied ? 'access denied by the cache' : status === 200 ? '' : `HTTP ${status}`);
      resolve({ ok, status, body, ms: performance.now() - started, error: why });
    };
    let p: URL;
    try {
      p = new URL(proxy);
    } catch {
      finish(0, Buffer.alloc(0), `bad proxy URL ${proxy}`);
      return;
    }
    const req = request({
      host: p.hostname.replace(/^\[|\]$/g, ''),
      port: Number(p.port || 80),
      method: 'GET',
      path: target,
      headers: { host: new URL(target).host },
      agent: false,
      signal: options.signal,
    });
    const timer = setTimeout(() => {
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
      res.on('end', () => finish(res.statusCode ?? 0, Buffer.concat(chunks).subarray(0, maxBytes), ''));
      res.on('error', (err) => finish(res.statusCode ?? 0, Buffer.alloc(0), err.message));
    });
    req.end();
  });
}
