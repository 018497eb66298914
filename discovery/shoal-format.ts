// Shoal's REST answers, byte for byte where clients parse them: the JSON object keyed "0", "1", …
// in rank order (null when nothing matches) and the /wpad.dat PAC text. Pure.

import type { Answer } from './query.ts';
import { type CacheEntry, isVerified, proxyHost } from './registry.ts';

export const PAC_CONTENT_TYPE = 'application/x-ns-proxy-autoconfig';

function shoalEntry(e: CacheEntry, local: boolean, distance: number) {
  const g = e.location;
  return {
    created: e.created / 1000,
    last_active: e.lastActive / 1000,
    hostname: e.hostname,
    squid_port: e.port,
    public_ip: e.publicIp ?? null,
    private_ip: e.privateIp ?? null,
    external_ip: e.externalIp ?? null,
    geo_data: {
      city: g?.city ?? null,
      region_code: g?.region ?? null,
      time_zone: g?.timeZone ?? null,
      metro_code: null,
      latitude: g?.lat ?? null,
      longitude: g?.lon ?? null,
      postal_code: g?.postalCode ?? null,
      country_code: g?.countryCode ?? null,
      country_name: g?.countryName ?? null,
      continent: g?.continent ?? null,
    },
    load: e.load,
    verified: isVerified(e),
    global_access: e.globalAccess,
    max_load: e.maxLoad,
    local,
    cache_type: e.shoalType,
    upstream: e.upstream,
    distance,
  };
}

export type ShoalJson = Record<string, ReturnType<typeof shoalEntry>> | null;

export function shoalNearest(answer: Answer): ShoalJson {
  if (answer.caches.length === 0) return null;
  const out: Record<string, ReturnType<typeof shoalEntry>> = {};
  answer.caches.forEach((r, i) => {
    out[String(i)] = shoalEntry(r.item, r.local, r.cost);
  });
  return out;
}

/** /all: every cache, keyed by uuid as Shoal does, with no ranking (distance 0). */
export function shoalAll(entries: Iterable<CacheEntry>): Record<string, ReturnType<typeof shoalEntry>> {
  const out: Record<string, ReturnType<typeof shoalEntry>> = {};
  for (const e of entries) out[e.id] = shoalEntry(e, false, 0);
  return out;
}

/** `PROXY http://h:p; …; DIRECT` in rank order. */
export function pacText(proxies: readonly { host: string; port: number }[]): string {
  const hp = (h: string) => (h.includes(':') ? `[${h}]` : h);
  const list = [...proxies.map((p) => `PROXY http://${hp(p.host)}:${p.port}`), 'DIRECT'].join('; ');
  return `function FindProxyForURL(url, host) { return "${list}"; }`;
}

export function shoalPac(answer: Answer): string {
  return pacText(answer.caches.map((r) => ({ host: proxyHost(r.item, r.local), port: r.item.port })));
}
