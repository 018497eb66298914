import { describe, expect, it } from 'vitest';
import { placement, rankNearest } from '../../discovery/ranking.ts';
import { LatitudeIndex } from '../../discovery/spatial-index.ts';

function rng(seed: number) {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

describe('the latitude-band index answers exactly as a full scan', () => {
  const rnd = rng(11);
  const items = Array.from({ length: 3000 }, (_, i) => ({
    id: i,
    load: rnd() * 1000,
    maxLoad: 1000,
    ...placement(i % 50 === 0 ? undefined : { lat: rnd() * 180 - 90, lon: rnd() * 360 - 180 }),
  }));
  const index = new LatitudeIndex<(typeof items)[number]>();
  for (const it of items) index.add(it);
  // Churn: remove and re-add a third, as heartbeats do, leaving stale (lower) band minima.
  for (const it of items.slice(0, 1000)) index.remove(it);
  for (const it of items.slice(0, 1000)) {
    it.load = rnd() * 1000;
    index.add(it);
  }
  const ids = (r: { item: { id: number } }[]) => r.map((x) => x.item.id);

  it('for clients anywhere, including the poles, with and without a filter', () => {
    for (let q = 0; q < 300; q++) {
      const client = { lat: q === 0 ? 90 : q === 1 ? -90 : rnd() * 180 - 90, lon: rnd() * 360 - 180 };
      const accept = q % 3 === 0 ? (x: { id: number }) => x.id % 7 === 0 : () => true;
      const n = 1 + (q % 10);
      expect(ids(index.nearest(client, n, accept))).toEqual(ids(rankNearest(items, client, n, accept)));
    }
  });
  it('for an unplaced client, and when only unplaced caches pass the filter', () => {
    expect(ids(index.nearest(undefined, 5, () => true))).toEqual(
      ids(rankNearest(items, undefined, 5, () => true)),
    );
    const unplacedOnly = (x: { id: number }) => x.id % 50 === 0;
    expect(ids(index.nearest({ lat: 1, lon: 2 }, 5, unplacedOnly))).toEqual(
      ids(rankNearest(items, { lat: 1, lon: 2 }, 5, unplacedOnly)),
    );
    expect(index.nearest({ lat: 1, lon: 2 }, 5, unplacedOnly)).toHaveLength(5);
  });
  it('after a rebuild and after removals', () => {
    for (const it of items.slice(1000, 2000)) index.remove(it);
    index.rebuild();
    const rest = items.filter((_, i) => i < 1000 || i >= 2000);
    const client = { lat: 45, lon: 7 };
    expect(ids(index.nearest(client, 8, () => true))).toEqual(ids(rankNearest(rest, client, 8, () => true)));
  });
});
