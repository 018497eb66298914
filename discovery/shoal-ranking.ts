// Shoal's ranking, exactly as its server computes it (shoal_server/utilities.py,
// get_nearest_verified_caches), for the Shoal-compatible endpoints:
//   cost = round(haversine km, 2) / (6378 · 3.14159265359) · 0.5 + (load / 122000) · 0.5
// Shoal looks up `cache.maxload`, an attribute its CacheNode never has (it stores `max_load`), so
// every cache is ranked against the configured default of 122,000 KB/s whatever its heartbeat
// says: a 10 Gbit/s cache at half load ranks as if it were overloaded. Shoal clients are built
// around that order, so these endpoints keep it; estuary's /api/v1 ranks against each cache's own
// max_load (ranking.ts).
//
// Where Shoal drops a cache or client it cannot place, this keeps ranking.ts's rule: an unplaced
// cache sits at the far side of the earth, an unplaced client ranks by load alone. Pure.

import { EARTH_RADIUS_KM, haversineKm, type Point, type Ranked } from './ranking.ts';
import type { CacheEntry } from './registry.ts';

/** Shoal's config default cache_max_load, the only max load its ranking ever uses. */
export const SHOAL_MAX_LOAD = 122_000;
/** Shoal writes π as this literal; kept so costs have Shoal's exact digits. */
const SHOAL_PI = 3.14159265359;
/** Up to this N the best are kept by insertion; beyond it sorting everything is cheaper. */
const INSERTION_LIMIT = 64;

export function shoalCost(distanceKm: number, load: number): number {
  const km = Math.round(distanceKm * 100) / 100;
  return (km / (EARTH_RADIUS_KM * SHOAL_PI)) * 0.5 + (load / SHOAL_MAX_LOAD) * 0.5;
}

function ranked(e: CacheEntry, client: Point | undefined): Ranked<CacheEntry> {
  const placed = e.location !== undefined;
  if (!client) return { item: e, cost: (e.load / SHOAL_MAX_LOAD) * 0.5, distanceKm: undefined };
  const distanceKm = placed ? haversineKm(client, e.location!) : undefined;
  return { item: e, cost: shoalCost(distanceKm ?? EARTH_RADIUS_KM * SHOAL_PI, e.load), distanceKm };
}

/** The `n` cheapest accepted caches by Shoal's cost; ties keep registration order, as Python's sort. */
export function shoalNearest(
  entries: Iterable<CacheEntry>,
  client: Point | undefined,
  n: number,
  accept: (e: CacheEntry) => boolean,
): Ranked<CacheEntry>[] {
  if (n <= 0) return [];
  const best: Ranked<CacheEntry>[] = [];
  for (const e of entries) {
    if (!accept(e)) continue;
    const r = ranked(e, client);
    if (n > INSERTION_LIMIT) {
      best.push(r);
      continue;
    }
    if (best.length === n && best[n - 1]!.cost <= r.cost) continue;
    let i = best.length;
    while (i > 0 && best[i - 1]!.cost > r.cost) i--;
    best.splice(i, 0, r);
    if (best.length > n) best.pop();
  }
  // Array.prototype.sort is stable, like Python's sorted().
  return n > INSERTION_LIMIT ? best.sort((a, b) => a.cost - b.cost).slice(0, n) : best;
}
