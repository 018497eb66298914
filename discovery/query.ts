// A nearest-cache question and its answer, shared by every endpoint (Shoal's and estuary's own):
// which caches a client may be sent to, in what order. Pure over the registry.
//
// A cache with only private addresses is offered only to clients in its own site (per the site
// map) or its own subnet: Shoal sent such caches to everyone, and clients elsewhere timed out.

import { sameSubnet } from './cidr.ts';
import type { Locator } from './locator.ts';
import type { Point, Ranked } from './ranking.ts';
import { type CacheEntry, isPrivateOnly, isVerified, type Location, type Registry } from './registry.ts';

/** Which caches an endpoint considers. */
export type Want = 'all' | 'squid' | 'cvmfs' | 'frontier';

export interface Question {
  readonly want: Want;
  readonly n: number;
  readonly verifiedOnly: boolean;
  /** The client's address (the connection's, or ?ip= to ask on behalf of another). */
  readonly clientIp?: string;
  readonly explicit?: Point;
  /** Only caches that report holding this CVMFS repository or S3/HTTP prefix. */
  readonly holds?: string;
  /** 'shoal': Shoal's exact order (its fixed max load), for the Shoal-compatible endpoints. */
  readonly ranking?: 'estuary' | 'shoal';
}

export interface Answer {
  readonly client: Location | undefined;
  readonly clientSite: string | undefined;
  readonly caches: readonly (Ranked<CacheEntry> & { readonly local: boolean })[];
}

/** Shoal's default answer size. */
export const DEFAULT_N = 5;
/** Enough for any real client of /api/v1; Shoal's paths take any N (capped at the registry size). */
export const MAX_N = 100;

function wanted(e: CacheEntry, want: Want): boolean {
  switch (want) {
    case 'all':
      return true;
    case 'squid':
      return e.shoalType === 'squid';
    case 'cvmfs':
      return e.upstream === 'cvmfs' || e.upstream === 'both';
    case 'frontier':
      return e.upstream === 'frontier' || e.upstream === 'both';
  }
}

export function holdsThing(e: CacheEntry, thing: string): boolean {
  const h = e.holds;
  if (!h) return false;
  return (
    h.cvmfs.some((c) => c.repo === thing) ||
    h.prefixes.some((p) => p.prefix === thing || p.prefix.startsWith(`${thing}/`))
  );
}

/** Whether the client sits in the cache's own network: same site in the site map, or same subnet. */
export function isLocal(
  e: CacheEntry,
  clientIp: string | undefined,
  clientSite: string | undefined,
): boolean {
  if (clientSite !== undefined && e.site === clientSite) return true;
  if (!clientIp) return false;
  return [e.privateIp, e.publicIp].some((a) => a !== undefined && sameSubnet(a, clientIp));
}

export function ask(registry: Registry, locator: Locator, q: Question): Answer {
  const client = locator.client(q.clientIp, q.explicit);
  const clientSite = client?.site ?? (q.clientIp ? locator.siteOf(q.clientIp) : undefined);
  const accept = (e: CacheEntry) =>
    wanted(e, q.want) &&
    (!q.verifiedOnly || isVerified(e)) &&
    (q.holds === undefined || holdsThing(e, q.holds)) &&
    (!isPrivateOnly(e) || isLocal(e, q.clientIp, clientSite));
  const ranked =
    q.ranking === 'shoal'
      ? registry.nearestShoal(client, q.n, accept)
      : registry.nearest(client, q.n, accept);
  return {
    client,
    clientSite,
    caches: ranked.map((r) => ({ ...r, local: isLocal(r.item, q.clientIp, clientSite) })),
  };
}
