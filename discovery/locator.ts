// Where a cache or a client is. Precedence, most trusted first:
//   client: explicit ?lat=&lon=  >  site map  >  IP database
//   cache:  the agent's own --lat/--lon  >  site map  >  IP database on its public address
// Pure given a site map and a database, so the precedence is tested without files.

import { HEARTBEAT_EXTENSION_KEY, type Heartbeat } from '../lib/heartbeat.ts';
import { isLoopback, isPrivateAddress } from './cidr.ts';
import type { GeoDb } from './geoip.ts';
import type { Location } from './registry.ts';
import type { SiteMap } from './site-map.ts';

export interface Locator {
  cache(h: Heartbeat): Location | undefined;
  client(address: string | undefined, explicit?: { lat: number; lon: number }): Location | undefined;
  /** The site an address belongs to, from the site map only. */
  siteOf(address: string): string | undefined;
}

export function createLocator(siteMap: SiteMap, geo: GeoDb): Locator {
  const bySiteMap = (address: string): Location | undefined => {
    const hit = siteMap.lookup(address);
    return hit
      ? {
          lat: hit.site.lat,
          lon: hit.site.lon,
          source: 'site-map',
          site: hit.site.name,
          city: hit.site.city,
          countryCode: hit.site.countryCode,
          countryName: hit.site.countryName,
        }
      : undefined;
  };
  const byDb = (address: string): Location | undefined =>
    isPrivateAddress(address) || isLoopback(address) ? undefined : geo.lookup(address);
  return {
    cache(h) {
      const ext = h[HEARTBEAT_EXTENSION_KEY];
      const addresses = [h.public_ip, h.external_ip, h.private_ip].filter((a): a is string => !!a);
      const mapped = addresses.map(bySiteMap).find((l) => l !== undefined);
      if (ext?.lat !== undefined && ext.lon !== undefined) {
        return { lat: ext.lat, lon: ext.lon, source: 'heartbeat', site: ext.site ?? mapped?.site };
      }
      return mapped ?? addresses.map(byDb).find((l) => l !== undefined);
    },
    client(address, explicit) {
      const mapped = address ? bySiteMap(address) : undefined;
      if (explicit) return { lat: explicit.lat, lon: explicit.lon, source: 'query', site: mapped?.site };
      if (!address) return undefined;
      return mapped ?? byDb(address);
    },
    siteOf: (address) => siteMap.lookup(address)?.site.name,
  };
}
