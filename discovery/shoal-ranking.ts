// Shoal's ranking, exactly as its server computes it (shoal_server/utilities.py,
// get_nearest_verified_caches), for the Shoal-compatible endpoints:
//   cost = round(haversine km, 2) / (6378 · 3.14159265359) · 0.5 + (load / 122000) · 0.5
// Shoal looks up `cache.maxload`, an attribute its CacheNode never has (it stores `max_load`), so
// every cache is ranked against the configured default of 122,000 KB/s whatever its heartbeat
// says: a 10 Gbit/s cache at half load ranks as if it were overloaded. Shoal clients are built
// around that order, so these endpoints keep it; estuary's /api/v1 ranks against each cache's own
// max_load (ranking.ts).
//
// Registry.nearestShoal ranks with it over a second grid index whose caches all carry Shoal's max
// load. Where Shoal drops a cache or client it cannot place, ranking.ts's rule holds: an unplaced
// cache sits at the far side of the earth, an unplaced client ranks by load alone. Pure.

import { EARTH_RADIUS_KM } from './ranking.ts';

/** Shoal's config default cache_max_load, the only max load its ranking ever uses. */
export const SHOAL_MAX_LOAD = 122_000;
/** Shoal writes π as this literal; kept so costs have Shoal's exact digits. */
const SHOAL_PI = 3.14159265359;

/**
 * Shoal's cost, with its rounding of the distance to 0.01 km and its π: "distance" in its answers.
 * The grid ranks with the unrounded distance; the two orders differ only between caches whose
 * costs differ by less than the rounding (1e-7, i.e. 5 m), and the answer is sorted by this cost.
 */
export function shoalCost(distanceKm: number, load: number): number {
  const km = Math.round(distanceKm * 100) / 100;
  return (km / (EARTH_RADIUS_KM * SHOAL_PI)) * 0.5 + (load / SHOAL_MAX_LOAD) * 0.5;
}
