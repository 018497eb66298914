import { describe, expect, it } from 'vitest';
import { createLocator } from '../../discovery/locator.ts';
import { NO_GEO_DB } from '../../discovery/geoip.ts';
import { ask } from '../../discovery/query.ts';
import { Registry } from '../../discovery/registry.ts';
import { pacText, shoalNearest, shoalPac } from '../../discovery/shoal-format.ts';
import { EMPTY_SITE_MAP } from '../../discovery/site-map.ts';
import { heartbeat } from './fixtures.ts';

const locator = createLocator(EMPTY_SITE_MAP, NO_GEO_DB);

function registryOf(...hbs: ReturnType<typeof heartbeat>[]) {
  const r = new Registry();
  for (const h of hbs)
    r.apply(h, { nowMs: 1_700_000_000_000, auth: 'unsigned', skewS: 0, verify: false }, (x) =>
      locator.cache(x),
    );
  return r;
}

describe("Shoal's JSON answer", () => {
  it('is keyed "0", "1", … in rank order with exactly Shoal’s fields', () => {
    const r = registryOf(
      heartbeat(
        { uuid: 'far', hostname: 'far.example.org', public_ip: '131.225.1.1' },
        { lat: 41.85, lon: -88.3 },
      ),
      heartbeat(
        { uuid: 'near', hostname: 'near.example.org', private_ip: '10.0.0.5' },
        { lat: 36.1, lon: 140.1 },
      ),
    );
    const json = shoalNearest(
      ask(r, locator, { want: 'squid', n: 5, verifiedOnly: true, explicit: { lat: 36, lon: 140 } }),
    )!;
    expect(Object.keys(json)).toEqual(['0', '1']);
    expect(json['0']!.hostname).toBe('near.example.org');
    expect(Object.keys(json['0']!)).toEqual([
      'created',
      'last_active',
      'hostname',
      'squid_port',
      'public_ip',
      'private_ip',
      'external_ip',
      'geo_data',
      'load',
      'verified',
      'global_access',
      'max_load',
      'local',
      'cache_type',
      'upstream',
      'distance',
    ]);
    expect(Object.keys(json['0']!.geo_data)).toEqual([
      'city',
      'region_code',
      'time_zone',
      'metro_code',
      'latitude',
      'longitude',
      'postal_code',
      'country_code',
      'country_name',
      'continent',
    ]);
    expect(json['0']).toMatchObject({
      squid_port: 3128,
      public_ip: '130.87.1.1',
      private_ip: '10.0.0.5',
      external_ip: null,
    });
    expect(json['0']!.created).toBe(1_700_000_000);
    expect(json['0']!.distance).toBeLessThan(json['1']!.distance);
  });
  it('is null when nothing matches', () => {
    expect(
      shoalNearest(ask(new Registry(), locator, { want: 'squid', n: 5, verifiedOnly: true })),
    ).toBeNull();
  });
  it('filters CVMFS and Frontier upstreams', () => {
    const r = registryOf(
      heartbeat({ uuid: 'c', upstream: 'cvmfs' }),
      heartbeat({ uuid: 'f', upstream: 'frontier' }),
      heartbeat({ uuid: 'b', upstream: 'both' }),
    );
    const ids = (want: 'cvmfs' | 'frontier') =>
      ask(r, locator, { want, n: 5, verifiedOnly: true })
        .caches.map((c) => c.item.id)
        .sort();
    expect(ids('cvmfs')).toEqual(['b', 'c']);
    expect(ids('frontier')).toEqual(['b', 'f']);
  });
});

describe('/wpad.dat', () => {
  it('is exactly Shoal’s PAC text', () => {
    expect(
      pacText([
        { host: 'h1', port: 3128 },
        { host: 'h2', port: 8080 },
      ]),
    ).toBe(
      'function FindProxyForURL(url, host) { return "PROXY http://h1:3128; PROXY http://h2:8080; DIRECT"; }',
    );
    expect(pacText([])).toBe('function FindProxyForURL(url, host) { return "DIRECT"; }');
  });
  it('lists ranked caches by address', () => {
    const r = registryOf(heartbeat({ uuid: 'a', public_ip: '130.87.1.1' }));
    expect(shoalPac(ask(r, locator, { want: 'squid', n: 5, verifiedOnly: true }))).toContain(
      'PROXY http://130.87.1.1:3128; DIRECT',
    );
  });
});
