import { describe, expect, it } from 'vitest';
import { parseHeartbeat } from '../../lib/heartbeat.ts';
import type { GeoDb } from '../../discovery/geoip.ts';
import { createLocator } from '../../discovery/locator.ts';
import { pyDumps, pyFloat, pyFloatRepr } from '../../discovery/py-json.ts';
import { ask, type Want } from '../../discovery/query.ts';
import { type Location, Registry } from '../../discovery/registry.ts';
import { haversineKm } from '../../discovery/ranking.ts';
import { pacText, shoalAll, shoalNearest, shoalPac } from '../../discovery/shoal-format.ts';
import { shoalCost } from '../../discovery/shoal-ranking.ts';
import { EMPTY_SITE_MAP, parseSiteMap } from '../../discovery/site-map.ts';
import { heartbeat } from './fixtures.ts';
import { parseLikeShoalClient } from './shoal-client-parse.ts';
import {
  GOLDEN_ALL,
  GOLDEN_CLIENT_IP,
  GOLDEN_GEO,
  GOLDEN_HEARTBEATS,
  GOLDEN_NEAREST,
  GOLDEN_NEAREST_CVMFS,
  GOLDEN_NOW_MS,
  GOLDEN_WPAD,
} from './shoal-golden.ts';

const geo: GeoDb = {
  lookup(address: string): Location | undefined {
    const row = (GOLDEN_GEO as Record<string, (typeof GOLDEN_GEO)[keyof typeof GOLDEN_GEO]>)[address];
    if (!row) return undefined;
    return {
      lat: row.latitude,
      lon: row.longitude,
      source: 'ip-db',
      city: row.city,
      countryCode: row.country_code,
      countryName: row.country,
      continent: row.continent_code,
    };
  },
};
const locator = createLocator(EMPTY_SITE_MAP, geo);

function goldenRegistry(): Registry {
  const r = new Registry();
  for (const text of GOLDEN_HEARTBEATS) {
    const p = parseHeartbeat(Buffer.from(text));
    if (!p.ok) throw new Error(p.detail);
    r.apply(p.heartbeat, { nowMs: GOLDEN_NOW_MS, auth: 'unsigned', skewS: 0, verify: false }, (h) =>
      locator.cache(h),
    );
  }
  return r;
}

const nearest = (r: Registry, want: Want, n: number) =>
  ask(r, locator, { want, n, verifiedOnly: true, clientIp: GOLDEN_CLIENT_IP, ranking: 'shoal' });

describe("Shoal's answers, byte for byte against a Shoal server's", () => {
  it('/nearest', () => {
    const r = goldenRegistry();
    expect(shoalNearest(nearest(r, 'squid', 20))).toBe(GOLDEN_NEAREST);
  });
  it('/nearestcvmfs', () => {
    expect(shoalNearest(nearest(goldenRegistry(), 'cvmfs', 20))).toBe(GOLDEN_NEAREST_CVMFS);
  });
  it('/all', () => {
    expect(shoalAll(goldenRegistry().values())).toBe(GOLDEN_ALL);
  });
  it('/wpad.dat', () => {
    expect(shoalPac(nearest(goldenRegistry(), 'squid', 10))).toBe(GOLDEN_WPAD);
  });
  it('null when nothing matches, as json.dumps(None)', () => {
    expect(shoalNearest(nearest(new Registry(), 'squid', 5))).toBe('null');
    expect(shoalAll([])).toBe('null');
    expect(pacText([])).toBe('function FindProxyForURL(url, host)\n{\n    return "DIRECT";\n}\n');
  });
});

describe("shoal-client's regular expressions read every cache", () => {
  it('in the golden answers', () => {
    const caches = parseLikeShoalClient(GOLDEN_NEAREST_CVMFS);
    expect(Object.keys(caches)).toEqual(['0', '1', '2']);
    expect(caches['0']).toMatchObject({
      hostname: 'squid1.example.org',
      squid_port: 3128,
      public_ip: '198.51.100.10',
      private_ip: '10.1.0.5',
      local: null,
      load: 12.5,
    });
    expect(caches['1']).toMatchObject({ hostname: 'varnish.example.org', squid_port: 6081 });
    expect(caches['2']).toMatchObject({ public_ip: '203.0.113.20', external_ip: '203.0.113.20' });
    expect(caches['2']!.geo_data).toMatchObject({ city: 'Gen\\u00e8ve', country_code: 'CH' });
  });
  it('in estuary answers with odd values: IPv6, long names, no position, a local cache', () => {
    const r = new Registry();
    const hbs = [
      heartbeat({ uuid: 'v6', hostname: 'six.example.org', public_ip: '2001:db8::1', load: 0 }),
      heartbeat({ uuid: 'x', hostname: `${'a'.repeat(60)}.example.org`, public_ip: '130.87.1.1' }),
      heartbeat({ uuid: 'loc', public_ip: '192.0.2.9', private_ip: '10.10.0.9', load: 1e-7 }),
    ];
    for (const h of hbs)
      r.apply(h, { nowMs: GOLDEN_NOW_MS, auth: 'unsigned', skewS: 0, verify: false }, () => undefined);
    const body = shoalNearest(
      ask(r, locator, { want: 'squid', n: 10, verifiedOnly: true, clientIp: '192.0.2.44' }),
    );
    const caches = parseLikeShoalClient(body);
    expect(Object.keys(caches)).toHaveLength(3);
    const byHost = Object.values(caches).map((c) => [c.hostname, c.public_ip, c.squid_port, c.local]);
    expect(byHost).toContainEqual(['six.example.org', '2001:db8::1', 3128, null]);
    expect(byHost).toContainEqual(['cache1.example.org', '192.0.2.9', 3128, 'true']);
    expect(JSON.parse(body)).toBeTruthy();
  });
});

describe("Python's json.dumps", () => {
  it('writes floats as repr does', () => {
    const cases: [number, string][] = [
      [0, '0.0'],
      [-0, '-0.0'],
      [1, '1.0'],
      [12.5, '12.5'],
      [1e-4, '0.0001'],
      [1e-5, '1e-05'],
      [1.5e-7, '1.5e-07'],
      [1e15, '1000000000000000.0'],
      [1e16, '1e+16'],
      [1.2345678901234568e17, '1.2345678901234568e+17'],
      [1700000000.5, '1700000000.5'],
      [-73.5673, '-73.5673'],
      [0.21013942310562198, '0.21013942310562198'],
      [1e300, '1e+300'],
    ];
    for (const [x, want] of cases) expect(pyFloatRepr(x)).toBe(want);
  });
  it('separates with ", " and ": ", escapes non-ASCII, keeps ints as ints', () => {
    expect(pyDumps({ a: 1, b: [true, null], c: 'Montréal\u007f', d: pyFloat(2) })).toBe(
      '{"a": 1, "b": [true, null], "c": "Montr\\u00e9al\\u007f", "d": 2.0}',
    );
  });
});

describe('geo_data from the site map', () => {
  it('carries the city and country the operator wrote', () => {
    const map = parseSiteMap(
      'sites:\n  - {name: KEK, lat: 36.15, lon: 140.08, cidrs: [130.87.0.0/16], city: Tsukuba, country_code: JP, country_name: Japan}\n',
    );
    const loc = createLocator(map, geo);
    const r = new Registry();
    r.apply(heartbeat({ public_ip: '130.87.1.1' }), { nowMs: 0, auth: 'unsigned', skewS: 0, verify: false }, (h) =>
      loc.cache(h),
    );
    const body = shoalAll(r.values());
    expect(body).toContain('"city": "Tsukuba"');
    expect(body).toContain('"country_code": "JP", "country_name": "Japan"');
    expect(body).toContain('"latitude": 36.15, "longitude": 140.08');
  });
});

describe("Shoal's ranking on Shoal's endpoints, estuary's on /api/v1", () => {
  // Same place; "big" is a 10 Gbit/s cache at 5 % of its max load, "small" a full 400 Mbit/s one.
  // Shoal ranks both against its fixed 122,000 KB/s and puts the small one first.
  const r = new Registry();
  const at = { lat: 46.2, lon: 6.1 };
  for (const [uuid, load, max] of [
    ['big', 60_000, 1_220_000],
    ['small', 50_000, 50_000],
  ] as const)
    r.apply(heartbeat({ uuid, load, max_load: max }, at), { nowMs: 0, auth: 'unsigned', skewS: 0, verify: false }, (h) =>
      locator.cache(h),
    );
  const order = (ranking: 'shoal' | 'estuary') =>
    ask(r, locator, { want: 'squid', n: 5, verifiedOnly: true, explicit: at, ranking }).caches.map(
      (c) => c.item.id,
    );
  it('Shoal: every cache against 122,000 KB/s, whatever its max_load', () => {
    expect(order('shoal')).toEqual(['small', 'big']);
    const body = shoalNearest(ask(r, locator, { want: 'squid', n: 5, verifiedOnly: true, explicit: at, ranking: 'shoal' }));
    expect(body).toContain(`"distance": ${pyFloatRepr((50_000 / 122_000) * 0.5)}}`);
  });
  it('estuary: each cache against its own max_load', () => {
    expect(order('estuary')).toEqual(['big', 'small']);
  });
  it('a large N on the Shoal ranking sorts every cache the same way', () => {
    const many = ask(r, locator, { want: 'squid', n: 500, verifiedOnly: true, explicit: at, ranking: 'shoal' });
    expect(many.caches.map((c) => c.item.id)).toEqual(['small', 'big']);
  });
});

describe("Shoal's ranking through the grid index", () => {
  it('gives the same caches in the same order as costing every cache the way Shoal does', () => {
    let seed = 42;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const r = new Registry();
    for (let i = 0; i < 400; i++) {
      const pos = { lat: rnd() * 180 - 90, lon: rnd() * 360 - 180 };
      const h = heartbeat({ uuid: `c${i}`, load: rnd() * 200_000, max_load: 1 + rnd() * 1e6 }, i % 10 ? pos : undefined);
      r.apply(h, { nowMs: 0, auth: 'unsigned', skewS: 0, verify: false }, (x) => locator.cache(x));
    }
    for (let q = 0; q < 40; q++) {
      const at = { lat: rnd() * 180 - 90, lon: rnd() * 360 - 180 };
      const got = ask(r, locator, { want: 'squid', n: 7, verifiedOnly: true, explicit: at, ranking: 'shoal' });
      const brute = [...r.values()]
        .filter((e) => e.location)
        .map((e) => ({ id: e.id, cost: shoalCost(haversineKm(at, e.location!), e.load) }))
        .sort((a, b) => a.cost - b.cost)
        .slice(0, 7);
      expect(got.caches.map((c) => c.item.id)).toEqual(brute.map((b) => b.id));
      expect(got.caches.map((c) => c.cost)).toEqual(brute.map((b) => b.cost));
    }
  });
});
