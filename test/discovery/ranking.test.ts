import { describe, expect, it } from 'vitest';
import { cost, EARTH_RADIUS_KM, haversineKm, placement, rankNearest } from '../../discovery/ranking.ts';

const GENEVA = { lat: 46.2044, lon: 6.1432 };
const CHICAGO = { lat: 41.8781, lon: -87.6298 };
const TSUKUBA = { lat: 36.0835, lon: 140.0764 };

describe('haversine with R = 6378 km', () => {
  it('matches known great-circle distances', () => {
    expect(haversineKm(GENEVA, GENEVA)).toBe(0);
    // London–New York is the textbook 5,570 km on a 6,371 km sphere; R = 6378 scales it by 6378/6371.
    const km = haversineKm({ lat: 51.5074, lon: -0.1278 }, { lat: 40.7128, lon: -74.006 });
    expect(km * (6371 / 6378)).toBeGreaterThan(5565);
    expect(km * (6371 / 6378)).toBeLessThan(5575);
    expect(haversineKm({ lat: 0, lon: 0 }, { lat: 0, lon: 180 })).toBeCloseTo(EARTH_RADIUS_KM * Math.PI, 6);
  });
});

describe("Shoal's cost", () => {
  it('is half distance share, half load share', () => {
    expect(cost(0, 0, 100)).toBe(0);
    expect(cost(EARTH_RADIUS_KM * Math.PI, 0, 100)).toBeCloseTo(0.5);
    expect(cost(0, 100, 100)).toBeCloseTo(0.5);
    expect(cost(EARTH_RADIUS_KM * Math.PI * 0.5, 25, 100)).toBeCloseTo(0.25 + 0.125);
  });
});

const cache = (name: string, p: { lat: number; lon: number } | undefined, load = 0, maxLoad = 1000) => ({
  name,
  load,
  maxLoad,
  ...placement(p),
});

describe('rankNearest', () => {
  const caches = [
    cache('tsukuba', TSUKUBA),
    cache('chicago', CHICAGO),
    cache('geneva', GENEVA),
    cache('nowhere', undefined),
  ];
  it('orders by ascending cost and keeps N', () => {
    const r = rankNearest(caches, GENEVA, 3, () => true);
    expect(r.map((x) => x.item.name)).toEqual(['geneva', 'chicago', 'tsukuba']);
    expect(r[0]!.distanceKm).toBe(0);
  });
  it('keeps an unplaced cache, after every placed one', () => {
    expect(
      rankNearest(caches, GENEVA, 10, () => true)
        .map((x) => x.item.name)
        .at(-1),
    ).toBe('nowhere');
  });
  it('ranks an idle unplaced cache after a placed one that is over its maximum load', () => {
    const r = rankNearest([cache('nowhere-idle', undefined, 0), cache('geneva-overloaded', GENEVA, 3000)], GENEVA, 2, () => true);
    expect(r.map((x) => x.item.name)).toEqual(['geneva-overloaded', 'nowhere-idle']);
  });
  it('ranks by load alone for a client it cannot place', () => {
    const loaded = [cache('busy', GENEVA, 900), cache('idle', TSUKUBA, 10)];
    expect(rankNearest(loaded, undefined, 2, () => true).map((x) => x.item.name)).toEqual(['idle', 'busy']);
  });
  it('load can outweigh distance', () => {
    const loaded = [cache('near-but-full', GENEVA, 1000), cache('far-idle', CHICAGO, 0)];
    expect(rankNearest(loaded, GENEVA, 1, () => true)[0]!.item.name).toBe('far-idle');
  });
  it('applies the filter and returns the same order as a full sort', () => {
    const many = Array.from({ length: 500 }, (_, i) =>
      cache(`c${i}`, { lat: ((i * 37) % 180) - 90, lon: ((i * 71) % 360) - 180 }, (i * 13) % 1000),
    );
    const even = (c: { name: string }) => Number(c.name.slice(1)) % 2 === 0;
    const got = rankNearest(many, CHICAGO, 7, even).map((x) => x.item.name);
    const full = many
      .filter(even)
      .map((c) => ({
        c,
        k: cost(
          haversineKm(CHICAGO, { lat: (c.latRad! * 180) / Math.PI, lon: (c.lonRad! * 180) / Math.PI }),
          c.load,
          c.maxLoad,
        ),
      }))
      .sort((a, b) => a.k - b.k)
      .slice(0, 7)
      .map((x) => x.c.name);
    expect(got).toEqual(full);
  });
  it('N = 0 gives nothing', () => {
    expect(rankNearest(caches, GENEVA, 0, () => true)).toEqual([]);
  });
});
