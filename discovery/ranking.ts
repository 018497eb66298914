// Shoal's ranking, kept exactly so answers match a Shoal server's: great-circle distance between
// client and cache (haversine, R = 6378 km) and
//   cost = distance / (R·π) · w + (load / max_load)^b · (1 − w),   w = 0.5, b = 1,
// ascending. distance/(R·π) is the fraction of the largest possible distance (half the
// circumference), so both terms lie in [0, 1] for a cache within its max load.
//
// Where Shoal drops a cache or a client it cannot place, estuary keeps it: an unplaced cache gets
// the largest distance term (it still serves, but after every placed cache), and an unplaced
// client ranks caches by load alone.
//
// This runs once per cache per query, so it works on precomputed radians and keeps the best N in a
// small sorted array instead of sorting the whole registry.

export const EARTH_RADIUS_KM = 6378;
export const DISTANCE_WEIGHT = 0.5;
export const LOAD_EXPONENT = 1;

export interface Point {
  readonly lat: number;
  readonly lon: number;
}

const RAD = Math.PI / 180;

export function haversineKm(a: Point, b: Point): number {
  return haversineRad(
    a.lat * RAD,
    a.lon * RAD,
    Math.cos(a.lat * RAD),
    b.lat * RAD,
    b.lon * RAD,
    Math.cos(b.lat * RAD),
  );
}

function haversineRad(
  lat1: number,
  lon1: number,
  cos1: number,
  lat2: number,
  lon2: number,
  cos2: number,
): number {
  const dLat = Math.sin((lat2 - lat1) / 2);
  const dLon = Math.sin((lon2 - lon1) / 2);
  const h = dLat * dLat + cos1 * cos2 * dLon * dLon;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)));
}

export function cost(distanceKm: number, load: number, maxLoad: number): number {
  const loadTerm = maxLoad > 0 ? (load / maxLoad) ** LOAD_EXPONENT : 1;
  return (distanceKm / (EARTH_RADIUS_KM * Math.PI)) * DISTANCE_WEIGHT + loadTerm * (1 - DISTANCE_WEIGHT);
}

/** Added to an unplaced cache's cost: larger than any placed cache's cost can be in practice. */
const UNPLACED_PENALTY = 1e9;

/** What ranking needs from a cache, with the trigonometry done once per heartbeat. */
export interface Placed {
  readonly load: number;
  readonly maxLoad: number;
  /** Undefined when the cache could not be placed. */
  readonly latRad?: number;
  readonly lonRad?: number;
  readonly cosLat?: number;
}

export function placement(p: Point | undefined): Pick<Placed, 'latRad' | 'lonRad' | 'cosLat'> {
  if (!p) return {};
  return { latRad: p.lat * RAD, lonRad: p.lon * RAD, cosLat: Math.cos(p.lat * RAD) };
}

export interface Ranked<T> {
  readonly item: T;
  readonly cost: number;
  /** Undefined when client or cache has no position. */
  readonly distanceKm: number | undefined;
}

/**
 * The `n` cheapest items that pass `accept`, cheapest first; ties keep iteration order. `best`
 * may already hold the best of earlier batches (the spatial index scans band by band), which
 * lets this batch skip everything that cannot beat them.
 */
export function rankNearest<T extends Placed>(
  items: Iterable<T>,
  client: Point | undefined,
  n: number,
  accept: (item: T) => boolean,
  best: Ranked<T>[] = [],
): Ranked<T>[] {
  if (n <= 0) return best;
  const cLat = client ? client.lat * RAD : 0;
  const cLon = client ? client.lon * RAD : 0;
  const cCos = Math.cos(cLat);
  const worst = () => (best.length === n ? best[n - 1]!.cost : Number.POSITIVE_INFINITY);
  for (const item of items) {
    const loadShare = item.maxLoad > 0 ? (item.load / item.maxLoad) ** LOAD_EXPONENT : 1;
    // The load share alone is a lower bound of the cost: skip the trigonometry when it cannot win.
    if (loadShare * (1 - DISTANCE_WEIGHT) >= worst()) continue;
    let distanceKm: number | undefined;
    if (client && item.latRad !== undefined) {
      distanceKm = haversineRad(cLat, cLon, cCos, item.latRad, item.lonRad!, item.cosLat!);
    }
    // An unplaced cache sits at the far side of the earth; an unplaced client sees no distance.
    const d = client ? (distanceKm ?? EARTH_RADIUS_KM * Math.PI) : 0;
    // ...and after every placed cache, however loaded: a placed cache's load term has no upper
    // bound, so the far side of the earth alone does not keep an idle unplaced cache behind it.
    const unplaced = client && distanceKm === undefined ? UNPLACED_PENALTY : 0;
    const c =
      unplaced + (d / (EARTH_RADIUS_KM * Math.PI)) * DISTANCE_WEIGHT + loadShare * (1 - DISTANCE_WEIGHT);
    if (c >= worst()) continue;
    if (!accept(item)) continue;
    let i = best.length;
    while (i > 0 && best[i - 1]!.cost > c) i--;
    best.splice(i, 0, { item, cost: c, distanceKm });
    if (best.length > n) best.pop();
  }
  return best;
}
