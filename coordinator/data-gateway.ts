// The production DataSource: each site's estuary gateway, over HTTP (roles do not import each
// other; the wire format is the gateway's admin API, docs/COORDINATOR.md "Where the data is").
//   holdings  POST <gateway>/estuary/v1/admin/holdings {urls}  (with the admin token), or, without
//             a token, GET <gateway>/estuary/v1/summary: coarser, host or bucket + first segment
//   size      http(s):// by HEAD (Content-Length); s3:// by asking a gateway that serves the
//             bucket to list it ({urls, sizes: true}); cvmfs:// cannot be sized
//   prewarm   POST <gateway>/estuary/v1/admin/prefetch {urls}: the gateway fetches them now
// Sites without a gateway: what their caches told discovery (GET <discovery>/api/v1/registry,
// the holdings each agent's heartbeat carries, summary-grained). A site whose gateway fails keeps
// its last answer; the others are unaffected.

import { readFileSync } from 'node:fs';
import type { GatewaySummary } from '../lib/gateway-summary.ts';
import { GATEWAY_PATHS } from '../lib/metric-names.ts';
import type { SiteConfig } from './config.ts';
import type { DataSource, Holdings } from './data.ts';
import { coordinatorErrors } from './errors.ts';
import { sameOrigin } from './url-scope.ts';

export interface GatewayEndpoint {
  readonly site: string;
  readonly url: string;
  readonly token?: string;
  readonly timeoutMs: number;
}

/**
 * HEAD, following redirects only on the URL's own origin (a few hops): a redirect elsewhere would
 * let whoever serves the location send the coordinator to any address. Undefined when refused.
 */
async function headWithinOrigin(url: string, timeoutMs: number): Promise<Response | undefined> {
  let at = url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const res = await fetch(at, { method: 'HEAD', redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || !location) return res;
    const next = new URL(location, at).href;
    if (!sameOrigin(url, next) || !sameOrigin(url, location.includes('://') ? location : next)) return undefined;
    at = next;
  }
  return undefined;
}

/** Same-origin redirects followed at most (a moved object, a trailing slash). */
const MAX_REDIRECTS = 3;

/** Inputs per holdings request: the gateway takes at most 1000. */
const HOLDINGS_BATCH = 1000;

/** A prefetch runs until the data is in: its answer may take as long as the transfer. */
const PREFETCH_TIMEOUT_MS = 6 * 3_600_000;

/** The gateways of the configured sites; the admin tokens are read now, so a bad path fails start-up. */
export function gatewayEndpoints(sites: Readonly<Record<string, SiteConfig>>): GatewayEndpoint[] {
  const out: GatewayEndpoint[] = [];
  for (const [site, s] of Object.entries(sites)) {
    if (!s.gateway) continue;
    let token: string | undefined;
    if (s.gateway.tokenFile) {
      try {
        token = readFileSync(s.gateway.tokenFile, 'utf8').trim();
      } catch (err) {
        throw coordinatorErrors.badConfig(`sites.${site}.gateway.token-file`, `cannot read ${s.gateway.tokenFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
      if (!token) throw coordinatorErrors.badConfig(`sites.${site}.gateway.token-file`, `${s.gateway.tokenFile} is empty`);
    }
    out.push({ site, url: s.gateway.url.replace(/\/+$/, ''), ...(token ? { token } : {}), timeoutMs: s.gateway.timeout });
  }
  return out;
}

/** Bytes of each input a gateway's summary accounts for (an upper bound where the summary is coarser). */
export function fromSummary(summary: GatewaySummary, inputs: readonly string[]): Holdings {
  const out = new Map<string, number>();
  for (const url of inputs) {
    const repo = /^cvmfs:\/\/([^/]+)\/?$/.exec(url)?.[1];
    if (repo) {
      out.set(url, summary.cvmfs.find((c) => c.repo === repo)?.bytes ?? 0);
      continue;
    }
    // The summary names s3://bucket/first-segment and host/first-segment (no scheme) for HTTP.
    const key = url.startsWith('s3://') ? url.replace(/\/+$/, '') : url.replace(/^https?:\/\//, '').replace(/\/+$/, '');
    let bytes = 0;
    for (const p of summary.prefixes)
      if (key === p.prefix || key.startsWith(`${p.prefix}/`) || p.prefix.startsWith(`${key}/`)) bytes += p.bytes;
    out.set(url, bytes);
  }
  return out;
}

/** Discovery, for sites without a gateway: which of its caches' `site` names each coordinator site. */
export interface DiscoveryEndpoint {
  readonly url: string;
  /** Coordinator site → the site name its caches report. */
  readonly sites: ReadonlyMap<string, string>;
  readonly timeoutMs: number;
}

interface RegistryAnswer {
  readonly caches: readonly { readonly site: string | null; readonly holds: Pick<GatewaySummary, 'cvmfs' | 'prefixes'> | null }[];
}

export class GatewayData implements DataSource {
  private readonly gateways: readonly GatewayEndpoint[];
  private readonly discovery: DiscoveryEndpoint | undefined;
  private readonly last = new Map<string, Holdings>();

  constructor(gateways: readonly GatewayEndpoint[], discovery?: DiscoveryEndpoint) {
    this.gateways = gateways;
    this.discovery = discovery;
  }

  /**
   * What the caches registered with discovery hold, per coordinator site without a gateway: the
   * most any one of its caches holds of each input (two caches may hold the same objects).
   */
  private async fromDiscovery(d: DiscoveryEndpoint, inputs: readonly string[]): Promise<void> {
    const endpoint: GatewayEndpoint = { site: 'discovery', url: d.url.replace(/\/+$/, ''), timeoutMs: d.timeoutMs };
    let answer: RegistryAnswer;
    try {
      answer = await this.call<RegistryAnswer>(endpoint, 'registry', '/api/v1/registry');
    } catch (err) {
      throw coordinatorErrors.discoveryFailed(endpoint.url, (err as Error).message.replace(/^site discovery: gateway registry failed: /, '').replace(/; check gateway\.url.*$/, ''));
    }
    const covered = new Set(this.gateways.map((g) => g.site));
    for (const [site, name] of d.sites) {
      if (covered.has(site)) continue;
      const held = new Map<string, number>(inputs.map((u) => [u, 0]));
      for (const c of answer.caches)
        if (c.site === name && c.holds)
          for (const [u, b] of fromSummary({ ...c.holds, version: 1, cache: { memoryBytes: 0, diskBytes: 0, objects: 0 } }, inputs))
            held.set(u, Math.max(held.get(u) ?? 0, b));
      this.last.set(site, held);
    }
  }

  private async call<T>(g: GatewayEndpoint, op: string, path: string, body?: unknown, timeoutMs = g.timeoutMs): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${g.url}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: {
          ...(g.token ? { authorization: `Bearer ${g.token}` } : {}),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw coordinatorErrors.dataFailed(g.site, op, `${g.url}: ${(err as Error).message}`);
    }
    const text = await res.text();
    if (!res.ok) throw coordinatorErrors.dataFailed(g.site, op, `${g.url} answered ${res.status}: ${text.slice(0, 200)}`);
    return JSON.parse(text) as T;
  }

  async holdings(inputs: readonly string[]): Promise<ReadonlyMap<string, Holdings>> {
    const failures: Error[] = [];
    const asked = this.gateways.length + (this.discovery ? 1 : 0);
    const d = this.discovery;
    await Promise.all([
      ...(d ? [this.fromDiscovery(d, inputs).catch((err: Error) => void failures.push(err))] : []),
      ...this.gateways.map(async (g) => {
        try {
          if (g.token) {
            const held = new Map<string, number>();
            for (let i = 0; i < inputs.length; i += HOLDINGS_BATCH) {
              const urls = inputs.slice(i, i + HOLDINGS_BATCH);
              const r = await this.call<{ holdings: { url: string; bytes: number }[] }>(g, 'holdings', `${GATEWAY_PATHS.admin}/holdings`, { urls });
              for (const h of r.holdings) held.set(h.url, h.bytes);
            }
            this.last.set(g.site, held);
          } else {
            this.last.set(g.site, fromSummary(await this.call<GatewaySummary>(g, 'summary', GATEWAY_PATHS.summary), inputs));
          }
        } catch (err) {
          failures.push(err as Error);
        }
      }),
    ]);
    if (failures.length === asked && failures.length > 0) throw failures[0]!;
    return new Map(this.last);
  }

  async size(url: string): Promise<number | undefined> {
    if (/^https?:\/\//.test(url)) {
      const res = await headWithinOrigin(url, this.gateways[0]?.timeoutMs ?? 10_000);
      const length = res?.headers.get('content-length') ?? null;
      return res?.ok && length !== null && /^\d+$/.test(length) ? Number(length) : undefined;
    }
    if (!url.startsWith('s3://')) return undefined;
    for (const g of this.gateways.filter((x) => x.token)) {
      const r = await this.call<{ holdings: { size?: number }[] }>(g, 'size', `${GATEWAY_PATHS.admin}/holdings`, { urls: [url], sizes: true });
      const size = r.holdings[0]?.size;
      if (size !== undefined) return size;
    }
    return undefined;
  }

  async prewarm(site: string, urls: readonly string[]): Promise<void> {
    const g = this.gateways.find((x) => x.site === site);
    if (!g) return; // a site without a gateway has nothing to warm
    if (!g.token) throw coordinatorErrors.dataFailed(site, 'prefetch', 'no admin token (gateway.token-file) to ask for a prefetch');
    // A dataset named without its slash may be an object or a prefix: ask for both.
    const wanted = urls.filter((u) => !u.startsWith('cvmfs://')).flatMap((u) => (u.startsWith('s3://') && !u.endsWith('/') ? [u, `${u}/`] : [u]));
    if (wanted.length === 0) return;
    await this.call(g, 'prefetch', `${GATEWAY_PATHS.admin}/prefetch`, { urls: wanted }, PREFETCH_TIMEOUT_MS);
  }
}
