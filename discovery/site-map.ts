// The site map: an operator's file saying which networks belong to which site and where that site
// is. It wins over the IP database because operators know their own networks (and their private
// ranges, which no database can place). Parsing is pure; the caller reads the file.
//
//   sites:
//     - name: KEK
//       lat: 36.15
//       lon: 140.08
//       cidrs: [130.87.0.0/16, 10.10.0.0/16]
//       city: Tsukuba              # optional: shown in Shoal's geo_data
//       country_code: JP           # optional
//       country_name: Japan        # optional

import { parse } from 'yaml';
import { z } from 'zod';
import { type Cidr, cidrContains, parseCidr } from './cidr.ts';

const siteSchema = z.object({
  name: z.string().min(1).max(128),
  lat: z.number().min(-90).max(90),
  lon: z.number().min(-180).max(180),
  cidrs: z.array(z.string()).min(1),
  city: z.string().min(1).max(128).optional(),
  country_code: z.string().min(2).max(3).optional(),
  country_name: z.string().min(1).max(128).optional(),
});
const fileSchema = z.object({ sites: z.array(siteSchema) });

export interface Site {
  readonly name: string;
  readonly lat: number;
  readonly lon: number;
  readonly city?: string;
  readonly countryCode?: string;
  readonly countryName?: string;
}

function siteOf(s: z.infer<typeof siteSchema>): Site {
  return {
    name: s.name,
    lat: s.lat,
    lon: s.lon,
    ...(s.city ? { city: s.city } : {}),
    ...(s.country_code ? { countryCode: s.country_code } : {}),
    ...(s.country_name ? { countryName: s.country_name } : {}),
  };
}

export interface SiteMap {
  /** The site whose most specific CIDR holds `address`, with that CIDR. */
  lookup(address: string): { site: Site; cidr: Cidr } | undefined;
  readonly sites: readonly Site[];
}

export function parseSiteMap(text: string): SiteMap {
  let data: unknown;
  try {
    data = parse(text);
  } catch (err) {
    throw new Error(`not valid YAML: ${(err as Error).message.split('\n')[0]}`, { cause: err });
  }
  const parsed = fileSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`${issue.path.join('.') || 'top level'}: ${issue.message}`);
  }
  const rows: { site: Site; cidr: Cidr }[] = [];
  for (const s of parsed.data.sites) {
    const site = siteOf(s);
    for (const c of s.cidrs) {
      try {
        rows.push({ site, cidr: parseCidr(c) });
      } catch (err) {
        throw new Error(`site ${s.name}: ${(err as Error).message}`, { cause: err });
      }
    }
  }
  // Most specific first, so the first match is the longest prefix.
  rows.sort((a, b) => b.cidr.bits - a.cidr.bits);
  return {
    sites: parsed.data.sites.map(siteOf),
    lookup: (address) => rows.find((r) => cidrContains(r.cidr, address)),
  };
}

export const EMPTY_SITE_MAP: SiteMap = { sites: [], lookup: () => undefined };
