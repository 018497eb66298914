// estuary's own API, version 1: /api/v1/caches and /api/v1/caches/:id. Unlike Shoal's answers it
// says where each position came from, how the cache proved itself (signature, verification) and
// what it holds. The zod schemas below are the contract; /api/v1/schema serves them as JSON Schema.

import { z } from 'zod';
import type { Answer } from './query.ts';
import { type CacheEntry, isVerified, proxyUrl } from './registry.ts';

export const API_VERSION = 1;

const locationSchema = z
  .object({
    lat: z.number(),
    lon: z.number(),
    source: z.enum(['heartbeat', 'site-map', 'ip-db', 'query']),
    site: z.string().optional(),
    city: z.string().optional(),
    countryCode: z.string().optional(),
  })
  .nullable();

export const cacheSchema = z.object({
  id: z.string().describe('the agent uuid'),
  hostname: z.string(),
  proxy: z.string().describe('http://host:port a client should use; the private address for local clients'),
  port: z.number().int(),
  kind: z.enum(['estuary', 'squid', 'varnish']),
  upstream: z.enum(['both', 'cvmfs', 'frontier']),
  load: z.number().describe('KB/s sent'),
  maxLoad: z.number().describe('KB/s the cache can send'),
  addresses: z.object({
    public: z.string().nullable(),
    private: z.string().nullable(),
    external: z.string().nullable(),
  }),
  site: z.string().nullable(),
  location: locationSchema,
  auth: z.enum(['signed', 'unsigned']).describe('unsigned: accepted on the Shoal-compatibility path'),
  keyId: z.string().nullable(),
  verified: z.boolean(),
  verification: z.object({
    state: z.enum(['pending', 'ok', 'failed', 'off']),
    checkedAt: z.string().nullable(),
    failures: z.number().int(),
    error: z.string().nullable(),
  }),
  clock: z.object({ skewS: z.number(), inSync: z.boolean() }),
  holds: z
    .object({
      bytes: z.number(),
      cvmfs: z.array(z.object({ repo: z.string(), bytes: z.number() })),
      prefixes: z.array(z.object({ prefix: z.string(), bytes: z.number() })),
    })
    .nullable(),
  created: z.string(),
  lastHeartbeat: z.string(),
});

export const rankedCacheSchema = cacheSchema.extend({
  rank: z.number().int(),
  cost: z.number().describe("Shoal's cost: distance share and load share, lower is better"),
  distanceKm: z.number().nullable(),
  local: z.boolean(),
});

export const nearestResponseSchema = z.object({
  version: z.literal(API_VERSION),
  client: z.object({ ip: z.string().nullable(), site: z.string().nullable(), location: locationSchema }),
  caches: z.array(rankedCacheSchema),
});

export const cacheListSchema = z.object({ version: z.literal(API_VERSION), caches: z.array(cacheSchema) });

export type ApiCache = z.infer<typeof cacheSchema>;
export type NearestResponse = z.infer<typeof nearestResponseSchema>;

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

export function apiCache(e: CacheEntry, local = false): ApiCache {
  const l = e.location;
  return {
    id: e.id,
    hostname: e.hostname,
    proxy: proxyUrl(e, local),
    port: e.port,
    kind: e.kind,
    upstream: e.upstream,
    load: e.load,
    maxLoad: e.maxLoad,
    addresses: { public: e.publicIp ?? null, private: e.privateIp ?? null, external: e.externalIp ?? null },
    site: e.site ?? null,
    location: l
      ? { lat: l.lat, lon: l.lon, source: l.source, site: l.site, city: l.city, countryCode: l.countryCode }
      : null,
    auth: e.auth,
    keyId: e.keyId ?? null,
    verified: isVerified(e),
    verification: {
      state: e.verification.state,
      checkedAt: iso(e.verification.checkedAt),
      failures: e.verification.failures,
      error: e.verification.error ?? null,
    },
    clock: { skewS: Math.round(e.skewS * 10) / 10, inSync: e.clockInSync },
    holds: e.holds ?? null,
    created: iso(e.created)!,
    lastHeartbeat: iso(e.lastActive)!,
  };
}

export function apiNearest(answer: Answer, clientIp: string | undefined): NearestResponse {
  const c = answer.client;
  return {
    version: API_VERSION,
    client: {
      ip: clientIp ?? null,
      site: answer.clientSite ?? null,
      location: c
        ? { lat: c.lat, lon: c.lon, source: c.source, site: c.site, city: c.city, countryCode: c.countryCode }
        : null,
    },
    caches: answer.caches.map((r, i) => ({
      ...apiCache(r.item, r.local),
      rank: i,
      cost: r.cost,
      distanceKm: r.distanceKm === undefined ? null : Math.round(r.distanceKm * 10) / 10,
      local: r.local,
    })),
  };
}

export function apiSchemas(): Record<string, unknown> {
  return {
    version: API_VERSION,
    nearest: z.toJSONSchema(nearestResponseSchema),
    cacheList: z.toJSONSchema(cacheListSchema),
    cache: z.toJSONSchema(cacheSchema),
  };
}
