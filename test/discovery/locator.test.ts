import { describe, expect, it } from 'vitest';
import { bundledGeoDbPaths, openGeoDb } from '../../discovery/geoip.ts';
import { createLocator } from '../../discovery/locator.ts';
import { ask } from '../../discovery/query.ts';
import { Registry } from '../../discovery/registry.ts';
import { parseSiteMap } from '../../discovery/site-map.ts';
import { heartbeat } from './fixtures.ts';

const SITE_MAP = `
sites:
  - name: KEK
    lat: 36.15
    lon: 140.08
    cidrs: [130.87.0.0/16, 10.10.0.0/16]
  - name: KEK-B
    lat: 36.2
    lon: 140.1
    cidrs: [130.87.5.0/24]
`;

describe('site map', () => {
  it('longest prefix wins', () => {
    const m = parseSiteMap(SITE_MAP);
    expect(m.lookup('130.87.5.9')?.site.name).toBe('KEK-B');
    expect(m.lookup('130.87.6.9')?.site.name).toBe('KEK');
    expect(m.lookup('8.8.8.8')).toBeUndefined();
  });
  it('says what is wrong with a bad file', () => {
    expect(() => parseSiteMap('sites: [{name: X, lat: 100, lon: 0, cidrs: [10.0.0.0/8]}]')).toThrow(/lat/);
    expect(() => parseSiteMap('sites: [{name: X, lat: 1, lon: 0, cidrs: [10.0.0.0/99]}]')).toThrow(/site X/);
    expect(() => parseSiteMap(': : :')).toThrow();
  });
});

describe('location precedence, with the bundled IP database', async () => {
  const db = await openGeoDb(bundledGeoDbPaths());
  const locator = createLocator(parseSiteMap(SITE_MAP), db);
  it('the IP database places a public address', () => {
    const l = locator.client('131.225.1.1');
    expect(l?.source).toBe('ip-db');
    expect(l?.countryCode).toBe('US');
    expect(l!.lat).toBeGreaterThan(40);
  });
  it('the site map wins over the database', () => {
    expect(locator.client('130.87.1.1')).toMatchObject({ source: 'site-map', site: 'KEK', lat: 36.15 });
  });
  it('explicit coordinates win over both, keeping the site', () => {
    expect(locator.client('130.87.1.1', { lat: 1, lon: 2 })).toMatchObject({
      source: 'query',
      lat: 1,
      site: 'KEK',
    });
  });
  it('private and loopback addresses are not looked up', () => {
    expect(locator.client('192.168.1.1')).toBeUndefined();
    expect(locator.client('127.0.0.1')).toBeUndefined();
  });
  it("a cache's own coordinates win; else its private range in the site map; else the database", () => {
    expect(locator.cache(heartbeat({}, { lat: 5, lon: 6 }))).toMatchObject({
      source: 'heartbeat',
      site: 'KEK',
    });
    expect(locator.cache(heartbeat({ public_ip: undefined, private_ip: '10.10.1.1' }))).toMatchObject({
      site: 'KEK',
    });
    expect(locator.cache(heartbeat({ public_ip: '141.52.1.1' }))).toMatchObject({
      source: 'ip-db',
      countryCode: 'DE',
    });
  });

  it('a private-only cache is offered only inside its site or subnet', () => {
    const r = new Registry();
    const meta = { nowMs: Date.now(), auth: 'signed' as const, skewS: 0, verify: false };
    r.apply(heartbeat({ uuid: 'priv', public_ip: undefined, private_ip: '10.10.1.1' }), meta, (h) =>
      locator.cache(h),
    );
    r.apply(heartbeat({ uuid: 'lab', public_ip: undefined, private_ip: '192.168.7.1' }), meta, (h) =>
      locator.cache(h),
    );
    const ids = (ip: string) =>
      ask(r, locator, { want: 'all', n: 5, verifiedOnly: true, clientIp: ip }).caches.map((c) => [
        c.item.id,
        c.local,
      ]);
    expect(ids('130.87.1.1')).toEqual([['priv', true]]);
    expect(ids('131.225.1.1')).toEqual([]);
    expect(ids('192.168.7.20')).toEqual([['lab', true]]);
  });
});
