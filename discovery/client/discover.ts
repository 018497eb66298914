// The worker-node client: ask a discovery server (estuary's or Shoal's: it uses Shoal's
// /nearestcvmfs/N endpoint) for the nearest caches, test each with a real fetch through it, order
// the ones that passed by how fast they answered, and add the fallbacks after them.

import { addressScope } from '../../lib/ip-address.ts';
import type { Logger } from '../../lib/log.ts';
import { proxyFetch } from '../../lib/proxy-fetch.ts';
import { isPlainHttpAnswer, notTlsReason } from '../../lib/tls-mismatch.ts';

export type Upstream = 'cvmfs' | 'frontier' | 'any';

export interface DiscoverOptions {
  readonly servers: readonly string[];
  readonly n: number;
  readonly upstream: Upstream;
  readonly testUrl: string;
  readonly test: boolean;
  readonly testTimeoutMs: number;
  readonly serverTimeoutMs: number;
  readonly log: Logger;
}

export interface Tested {
  readonly proxy: string;
  readonly ok: boolean;
  readonly ms: number;
  readonly error: string;
}

export interface Discovered {
  /** The server that answered, or undefined when none did. */
  readonly server?: string;
  readonly offered: readonly string[];
  readonly tested: readonly Tested[];
  /** Proxies that passed, fastest first. */
  readonly good: readonly string[];
  readonly serverErrors: readonly string[];
}

const ENDPOINT: Record<Upstream, string> = {
  cvmfs: 'nearestcvmfs',
  frontier: 'nearestconditions',
  any: 'nearest',
};

interface ShoalCache {
  hostname?: string;
  squid_port?: number | string;
  public_ip?: string | null;
  private_ip?: string | null;
  external_ip?: string | null;
  local?: boolean | null;
}

/** Shoal echoes the agent's port as it came, a string when it came from shoal_agent.conf. */
function shoalPort(v: unknown): number | undefined {
  const n = typeof v === 'string' && /^\d{1,5}$/.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 65535 ? n : undefined;
}

/** A DNS host name: letters, digits and hyphens in dot-separated labels, nothing a URL or CVMFS splits on. */
const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

/**
 * The proxy URL for an offered host and port, or undefined when the host is neither an IP address
 * nor a host name: a Shoal server stores whatever an agent sent, and a value such as
 * `10.0.0.1:3128;DIRECT;http://evil` would otherwise become three proxies in CVMFS_HTTP_PROXY.
 */
export function proxyUrl(host: string, port: number): string | undefined {
  const isAddress = addressScope(host) !== undefined;
  if (!isAddress && !HOST_NAME.test(host)) return undefined;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return URL.canParse(url) ? url : undefined;
}

/**
 * Proxy URLs from Shoal's answer, in rank order: the private address for caches local to us.
 * Entries whose address makes no proxy URL are passed to onSkip and left out.
 */
export function proxiesFromShoal(body: unknown, onSkip: (host: string) => void = () => {}): string[] {
  if (body === null || typeof body !== 'object') return [];
  const entries = Object.entries(body as Record<string, ShoalCache>)
    .filter(([k]) => /^\d+$/.test(k))
    .sort(([a], [b]) => Number(a) - Number(b));
  const out: string[] = [];
  for (const [, c] of entries) {
    const port = c ? shoalPort(c.squid_port) : undefined;
    if (!c || port === undefined) continue;
    const host = (c.local && c.private_ip) || c.public_ip || c.external_ip || c.private_ip || c.hostname;
    if (typeof host !== 'string' || !host) continue;
    const url = proxyUrl(host, port);
    if (url) out.push(url);
    else onSkip(host);
  }
  return out;
}

/** fetch's own "fetch failed" says nothing: add what it wraps (ECONNREFUSED, a timeout …). */
function failure(err: unknown): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  const inner = e.cause?.code ?? e.cause?.message;
  return inner && !e.message.includes(inner) ? `${e.message} (${inner})` : e.message;
}

/** A Shoal answer for 100 caches is well under 1 MB; more is not an answer worth a worker's memory. */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/** The body as text, or an error as soon as it grows past maxBytes (the rest is not read). */
async function cappedText(res: Response, maxBytes: number, url: string): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      await res.body?.cancel().catch(() => {});
      throw new Error(`${url}: answer larger than ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function askServer(server: string, o: DiscoverOptions): Promise<string[]> {
  const url = `${server.replace(/\/+$/, '')}/${ENDPOINT[o.upstream]}/${o.n}`;
  const res = await fetch(url, { signal: AbortSignal.timeout(o.serverTimeoutMs) });
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return proxiesFromShoal(JSON.parse(await cappedText(res, MAX_ANSWER_BYTES, url)), (host) =>
    o.log.warn({ server, address: JSON.stringify(host).slice(0, 200) }, 'skipping an offered cache whose address is not an IP address or host name'),
  );
}

export async function discover(o: DiscoverOptions): Promise<Discovered> {
  const serverErrors: string[] = [];
  let server: string | undefined;
  let offered: string[] = [];
  for (const s of o.servers) {
    try {
      offered = await askServer(s, o);
      server = s;
      break;
    } catch (err) {
      const why = isPlainHttpAnswer(err) ? notTlsReason(s) : failure(err);
      serverErrors.push(`${s}: ${why}`);
      o.log.warn({ server: s, err: why }, 'discovery server did not answer');
    }
  }
  if (!o.test) {
    const tested = offered.map((proxy) => ({ proxy, ok: true, ms: 0, error: '' }));
    return { server, offered, tested, good: offered, serverErrors };
  }
  const tested = await Promise.all(
    offered.map(async (proxy) => {
      const r = await proxyFetch(proxy, o.testUrl, { timeoutMs: o.testTimeoutMs, maxBytes: 256 * 1024 });
      const ok = r.ok && r.body.length > 0;
      if (!ok) o.log.warn({ proxy, error: r.error || 'empty body' }, 'proxy failed the test fetch');
      return { proxy, ok, ms: r.ms, error: ok ? '' : r.error || 'empty body' };
    }),
  );
  const good = tested
    .filter((t) => t.ok)
    .sort((a, b) => a.ms - b.ms)
    .map((t) => t.proxy);
  return { server, offered, tested, good, serverErrors };
}
