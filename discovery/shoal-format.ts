// Shoal's REST answers, byte for byte as a Shoal server (hep-gc/shoal, shoal_server/view.py) writes
// them, because Shoal clients read them with regular expressions rather than a JSON parser:
//   /nearest*   {"0": {...}, "1": {...}} in rank order with a "distance" (Shoal's cost), or null
//   /all        the same shape for every cache, in registration order, without "distance"
//   /wpad.dat   web.py's rendering of Shoal's wpad.dat template, hostnames first to last
// The bytes come from py-json.ts; estuary's own /api/v1 is plain JSON. Pure.

import { pyDumps, pyFloat } from './py-json.ts';
import type { Answer } from './query.ts';
import { type CacheEntry, isVerified } from './registry.ts';

export const PAC_CONTENT_TYPE = 'application/x-ns-proxy-autoconfig';
/** Shoal's /wpad.dat lists the ten nearest caches (utilities.get_nearest_caches' default). */
export const SHOAL_WPAD_COUNT = 10;

function shoalEntry(e: CacheEntry, local: boolean) {
  const g = e.location;
  return {
    created: pyFloat(e.created / 1000),
    last_active: pyFloat(e.lastActive / 1000),
    hostname: e.hostname,
    squid_port: e.port,
    public_ip: e.publicIp ?? null,
    private_ip: e.privateIp ?? null,
    external_ip: e.externalIp ?? null,
    geo_data: {
      city: g?.city ?? null,
      region_code: null,
      time_zone: g?.timeZone ?? null,
      metro_code: null,
      latitude: g ? pyFloat(g.lat) : null,
      longitude: g ? pyFloat(g.lon) : null,
      postal_code: g?.postalCode ?? null,
      country_code: g?.countryCode ?? null,
      country_name: g?.countryName ?? null,
      continent: g?.continent ?? null,
    },
    // Python 3 agents send the load as a float (bytes / 1024), and Shoal echoes it.
    load: pyFloat(e.load),
    verified: isVerified(e),
    global_access: e.globalAccess,
    max_load: e.maxLoad,
    // Shoal sends null unless it found the client in the cache's own domain; a client turns any
    // string, "false" included, into a true value, so false is never written.
    local: local ? true : null,
    cache_type: e.shoalType,
    upstream: e.upstream,
  };
}

/** The /nearest* body: Shoal's JSON text, `null` when nothing matches. */
export function shoalNearest(answer: Answer): string {
  if (answer.caches.length === 0) return 'null';
  const out: Record<string, unknown> = {};
  answer.caches.forEach((r, i) => {
    // "distance" is Shoal's cost, not kilometres: ranked by shoal-ranking.ts on these endpoints.
    out[String(i)] = { ...shoalEntry(r.item, r.local), distance: pyFloat(r.cost) };
  });
  return pyDumps(out);
}

/** The /all body: every cache keyed "0", "1", … in registration order, `null` when empty. */
export function shoalAll(entries: Iterable<CacheEntry>): string {
  const out: Record<string, unknown> = {};
  let i = 0;
  for (const e of entries) out[String(i++)] = shoalEntry(e, false);
  return i === 0 ? 'null' : pyDumps(out);
}

function bracketed(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * Shoal's wpad.dat as web.py renders its template: `PROXY http://host:port;` per cache with no
 * space between them, then ` DIRECT`. Shoal names each cache by its hostname.
 */
export function pacText(proxies: readonly { host: string; port: number }[]): string {
  const list = proxies.map((p) => `PROXY http://${bracketed(p.host)}:${p.port};`).join('');
  const value = list ? `${list} DIRECT` : 'DIRECT';
  return `function FindProxyForURL(url, host)\n{\n    return "${value}";\n}\n`;
}

export function shoalPac(answer: Answer): string {
  return pacText(answer.caches.map((r) => ({ host: r.item.hostname, port: r.item.port })));
}
