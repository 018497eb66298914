// The REST layer through Fastify's inject: Shoal's URL forms, estuary's API and its errors, the
// page. The same routes are exercised over real HTTP and RabbitMQ in amqp.test.ts.

import { describe, expect, it } from 'vitest';
import { NO_GEO_DB } from '../../discovery/geoip.ts';
import { buildHttp } from '../../discovery/http.ts';
import { createLocator } from '../../discovery/locator.ts';
import { createMetrics } from '../../discovery/metrics.ts';
import { Registry } from '../../discovery/registry.ts';
import { parseSiteMap } from '../../discovery/site-map.ts';
import { heartbeat, testLog } from './fixtures.ts';

const locator = createLocator(
  parseSiteMap('sites: [{name: KEK, lat: 36.15, lon: 140.08, cidrs: [130.87.0.0/16, 10.10.0.0/16]}]'),
  NO_GEO_DB,
);
const FACTS = {
  version: '0.0.0-test',
  exchange: 'shoal',
  broker: 'connected' as const,
  verify: false,
  shoalCompat: true,
  testUrl: 'http://cvmfs-stratum-one.cern.ch/cvmfs/cms.cern.ch/.cvmfspublished',
  expiryMs: 180_000,
  rejections: [],
};
const registry = new Registry();
const meta = { nowMs: Date.now(), auth: 'signed' as const, skewS: 0, verify: false };
registry.apply(
  heartbeat({ uuid: 'pub', hostname: 'pub.test', upstream: 'cvmfs' }, { site: '<b>KEK</b>' }),
  meta,
  (h) => locator.cache(h),
);
registry.apply(
  heartbeat({ uuid: 'priv', hostname: 'priv.test', public_ip: undefined, private_ip: '10.10.0.7' }),
  meta,
  (h) => locator.cache(h),
);
const app = buildHttp({
  registry,
  locator,
  metrics: createMetrics(registry),
  log: testLog().log,
  trustProxy: false,
  health: () => ({ ok: true }),
  pageFacts: () => FACTS,
});
const get = (url: string) => app.inject({ method: 'GET', url });

describe('REST', () => {
  it("takes Shoal's URL forms, with and without N and a trailing slash", async () => {
    for (const url of ['/nearestcvmfs', '/nearestcvmfs/', '/nearestcvmfs/3', '/nearestcvmfs/3/']) {
      const r = await get(url);
      expect(r.statusCode, url).toBe(200);
      expect(Object.keys(r.json())).toEqual(['0']);
    }
  });
  it('hands a private-only cache, by its private address, only to clients of its site', async () => {
    expect(
      Object.values((await get('/nearest?ip=130.87.3.3')).json())
        .map((c) => (c as { hostname: string }).hostname)
        .sort(),
    ).toEqual(['priv.test', 'pub.test']);
    expect(Object.keys((await get('/nearest?ip=8.8.8.8')).json())).toEqual(['0']);
    const pac = await get('/wpad.dat?ip=10.10.9.9&lat=36&lon=140');
    expect(pac.headers['content-type']).toBe('application/x-ns-proxy-autoconfig');
    // Shoal names caches by hostname in its PAC file; the private-only one is still offered only
    // inside its site.
    expect(pac.body).toContain('PROXY http://priv.test:3128;');
    expect((await get('/wpad.dat?ip=8.8.8.8')).body).not.toContain('priv.test');
  });
  it("takes any N on Shoal's paths, as Shoal does: 0 gives null, a large N every cache", async () => {
    expect((await get('/nearest/0')).body).toBe('null');
    expect(Object.keys((await get('/nearest/100000000000000000000/?ip=130.87.3.3')).json())).toEqual([
      '0',
      '1',
    ]);
    expect((await get('/all/7')).statusCode).toBe(200);
    expect(Object.keys((await get('/all/7')).json())).toEqual(Object.keys((await get('/all')).json()));
  });
  it('refuses a query parameter given twice with 400 and the code, never a 500', async () => {
    for (const url of [
      '/nearest?ip=1.1.1.1&ip=2.2.2.2',
      '/api/v1/caches?near=1.1.1.1&near=36,140',
      '/wpad.dat?lat=1&lat=2&lon=3',
      '/api/v1/caches?n=1&n=2',
    ]) {
      const r = await get(url);
      expect(r.statusCode, url).toBe(400);
      expect(r.json().code, url).toBe('ESTUARY_DISC_BAD_QUERY');
    }
  });
  it('answers bad parameters with 400 and a code', async () => {
    for (const url of [
      '/api/v1/caches?n=0',
      '/api/v1/caches?n=101',
      '/nearest/abc',
      '/nearest?lat=95&lon=0',
      '/nearest?lat=1',
      '/nearest?ip=nope',
      '/api/v1/caches?upstream=ftp',
    ]) {
      const r = await get(url);
      expect(r.statusCode, url).toBe(400);
      expect(r.json().code).toBe('ESTUARY_DISC_BAD_QUERY');
    }
    expect((await get('/api/v1/caches/missing')).json().code).toBe('ESTUARY_DISC_NO_SUCH_CACHE');
  });
  it('estuary API: near= as coordinates or an address, schema published', async () => {
    const byCoords = (await get('/api/v1/caches?near=36,140&n=1')).json();
    expect(byCoords.client.location).toMatchObject({ lat: 36, lon: 140, source: 'query' });
    expect(byCoords.caches).toHaveLength(1);
    const bad = await get('/api/v1/caches?near=36');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/LAT,LON/);
    const byIp = (await get('/api/v1/caches?near=130.87.1.1')).json();
    expect(byIp.client).toMatchObject({ site: 'KEK', location: { source: 'site-map' } });
    const schema = (await get('/api/v1/schema')).json();
    expect(schema.nearest.properties.caches.items.properties.proxy.type).toBe('string');
    expect((await get('/api/v1/caches/pub')).json().cache.hostname).toBe('pub.test');
  });
  it('the pages escape what agents send', async () => {
    const page = (await get('/caches/pub')).body;
    expect(page).toContain('&lt;b&gt;KEK&lt;/b&gt;');
    expect(page).not.toContain('<b>KEK</b>');
    expect((await get('/')).body).not.toContain('<script');
    expect((await get('/caches/nope')).statusCode).toBe(404);
  });
});

describe('/external_ip', () => {
  it("tells the caller its address, in Shoal's shape", async () => {
    const r = await app.inject({ method: 'GET', url: '/external_ip', remoteAddress: '203.0.113.9' });
    expect(r.json()).toEqual({ external_ip: '203.0.113.9' });
  });
});

describe('keys that come from the wire', () => {
  it('a cache whose uuid is __proto__ or constructor is listed like any other', async () => {
    const r = new Registry();
    for (const uuid of ['__proto__', 'constructor', 'plain'])
      r.apply(heartbeat({ uuid, hostname: `${uuid.replace(/_/g, 'u')}.test` }), meta, (h) => locator.cache(h));
    const a = buildHttp({
      registry: r,
      locator,
      metrics: createMetrics(r),
      log: testLog().log,
      trustProxy: false,
      health: () => ({ ok: true }),
      pageFacts: () => FACTS,
    });
    const all = (await a.inject({ method: 'GET', url: '/all' })).json() as Record<string, { hostname: string }>;
    expect(Object.values(all).map((c) => c.hostname).sort()).toEqual(
      ['constructor.test', 'plain.test', 'uuprotouu.test'].sort(),
    );
    const one = await a.inject({ method: 'GET', url: '/api/v1/caches/__proto__' });
    expect(one.statusCode).toBe(200);
    const reg = (await a.inject({ method: 'GET', url: '/api/v1/registry' })).json();
    expect(reg.caches).toHaveLength(3);
    expect((await a.inject({ method: 'GET', url: '/nearest?__proto__=1&constructor=2' })).statusCode).toBe(200);
  });
});
