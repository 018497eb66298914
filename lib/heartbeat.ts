// The heartbeat a cache agent publishes and discovery consumes: Shoal's message, field for field,
// so real Shoal agents and servers interoperate, plus estuary's own fields under one versioned key
// (`estuary_v1`) that Shoal servers ignore. A later incompatible change adds `estuary_v2` beside
// it rather than changing v1, so old and new servers can share an exchange.
//
// Parsing is deliberately lenient where Shoal is (unknown fields, squid_port from old agents,
// ports as strings) and strict where a bad value could mislead a client (addresses, ranges).

import { z } from 'zod';
import { addressScope } from './ip-address.ts';

export const HEARTBEAT_EXTENSION_KEY = 'estuary_v1';
export const HEARTBEAT_EXTENSION_VERSION = 1;

/** Shoal's exchange, exchange type and routing keys. */
export const SHOAL_EXCHANGE = 'shoal';
export const SHOAL_EXCHANGE_TYPE = 'topic';
export const HEARTBEAT_ROUTING_KEY = 'info';
/** estuary agents announce a clean stop with this routing key; Shoal servers treat it as a heartbeat. */
export const GOODBYE_ROUTING_KEY = 'goodbye';

/** A whole Shoal heartbeat is a few hundred bytes; estuary's summary adds at most a few KiB. */
export const MAX_HEARTBEAT_BYTES = 16 * 1024;

export const CACHE_KINDS = ['estuary', 'squid', 'varnish'] as const;
export type CacheKind = (typeof CACHE_KINDS)[number];
export const UPSTREAMS = ['both', 'cvmfs', 'frontier'] as const;
export type Upstream = (typeof UPSTREAMS)[number];

// An address a client elsewhere can connect to: no zone id (`fe80::1%eth0` means nothing off the
// sender's host and makes no URL), no multicast, broadcast or unspecified address.
const ip = z.string().refine((s) => {
  const scope = addressScope(s);
  return scope !== undefined && scope !== 'multicast' && scope !== 'broadcast';
}, 'not a unicast IP address (zone ids are not accepted)');

/**
 * Loopback, link-local and unspecified addresses (0/8, ::) in any spelling: they name the
 * receiver's own host or link.
 */
export function isHostOrLinkLocal(address: string): boolean {
  const scope = addressScope(address);
  return scope === 'loopback' || scope === 'link-local' || scope === 'unspecified';
}

/**
 * Shoal agents copy some options from shoal_agent.conf without converting them, so they arrive
 * as strings: max_load ("50000") from current agents, global_access and domain_access ("True")
 * from 0.9.x. Shoal's server stores them as they come; these accept the same spellings.
 */
const numberish = z.union([
  z.number(),
  z
    .string()
    .trim()
    .regex(/^-?\d+(\.\d+)?$/)
    .transform(Number),
]);
const PY_TRUE = ['true', 'yes', 'on', '1'];
const PY_FALSE = ['false', 'no', 'off', '0'];
/** A flag as Python's configparser spells it; anything else counts as not given. */
const flag = z
  .union([z.boolean(), z.string(), z.number()])
  .transform((v) => {
    if (typeof v === 'boolean') return v;
    const t = String(v).trim().toLowerCase();
    if (PY_TRUE.includes(t)) return true;
    if (PY_FALSE.includes(t)) return false;
    return undefined;
  })
  .optional();
const port = z
  .union([
    z.number(),
    z
      .string()
      .regex(/^\d{1,5}$/)
      .transform(Number),
  ])
  .pipe(z.number().int().min(1).max(65535));
/** 1e9 KB/s is about 8 Tbit/s: no single cache sends more, so anything above is garbage. */
const kbps = numberish.pipe(z.number().finite().min(0).max(1e9));
const bytes = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const shortText = z.string().min(1).max(128);
/**
 * Control characters (C0, DEL, C1) and bidirectional-format characters (U+200E/F, U+202A–E,
 * U+2066–9): a site name holding them can be made to look like another site's on a page or in a
 * terminal, so such a name makes the heartbeat invalid.
 */
const DECEPTIVE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
const siteName = shortText.refine((s) => !DECEPTIVE.test(s), 'site name holds control or direction-changing characters');

export const MAX_REPO_NAME = 128;
export const MAX_PREFIX = 256;
export const MAX_HOLDINGS = 32;
const repoHolding = z.object({ repo: z.string().min(1).max(MAX_REPO_NAME), bytes });
const prefixHolding = z.object({ prefix: z.string().min(1).max(MAX_PREFIX), bytes });

/**
 * A list of holdings that keeps the valid ones: one odd repository name (anyone can ask a gateway
 * for any path) must cost only that line of the summary, never the heartbeat of a healthy cache.
 */
function holdingList<T extends z.ZodType>(item: T) {
  return z.array(z.unknown()).transform((xs) =>
    xs.flatMap((x) => {
      const r = item.safeParse(x);
      return r.success ? [r.data as z.infer<T>] : [];
    }).slice(0, MAX_HOLDINGS),
  );
}

export const holdingsSchema = z.object({
  bytes,
  cvmfs: holdingList(repoHolding),
  prefixes: holdingList(prefixHolding),
});
export type Holdings = z.infer<typeof holdingsSchema>;

export const extensionSchema = z.object({
  version: z.literal(HEARTBEAT_EXTENSION_VERSION),
  cacheKind: z.enum(CACHE_KINDS),
  site: siteName.optional(),
  lat: z.number().min(-90).max(90).optional(),
  lon: z.number().min(-180).max(180).optional(),
  /** What the cache holds; only an estuary gateway reports it. */
  holds: holdingsSchema.optional(),
  /** The agent's own test fetch through its cache. */
  selfTest: z.object({ ok: z.boolean(), ms: z.number().min(0).max(3_600_000) }).optional(),
  /** Seconds between heartbeats, so discovery can tell a late cache from a slow agent. */
  intervalS: z.number().int().min(1).max(86_400).optional(),
  goodbye: z.boolean().optional(),
});
export type HeartbeatExtension = z.infer<typeof extensionSchema>;

export const heartbeatSchema = z
  .object({
    uuid: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[0-9A-Za-z_.:-]+$/, 'uuid must be letters, digits and -_.:'),
    hostname: z
      .string()
      .min(1)
      .max(253)
      .regex(/^[0-9A-Za-z_.:-]+$/, 'hostname must be a host name or address'),
    timestamp: z.number().finite(),
    load: kbps,
    cache_port: port.optional(),
    squid_port: port.optional(),
    cache_type: z.string().max(32).optional(),
    verified: flag,
    // Shoal never reads max_load back, so a value it cannot be is treated as not given.
    max_load: kbps.optional().catch(undefined),
    upstream: z.string().max(32).optional(),
    public_ip: ip.optional(),
    private_ip: ip.optional(),
    external_ip: ip.optional(),
    global_access: flag,
    domain_access: flag,
    [HEARTBEAT_EXTENSION_KEY]: extensionSchema.optional(),
  })
  .refine((h) => h.cache_port !== undefined || h.squid_port !== undefined, {
    message: 'cache_port or squid_port is required',
    path: ['cache_port'],
  });
export type Heartbeat = z.infer<typeof heartbeatSchema>;

/** The port a heartbeat advertises, from either field name. */
export function heartbeatPort(h: Heartbeat): number {
  return (h.cache_port ?? h.squid_port)!;
}

export type ParseResult =
  | { readonly ok: true; readonly heartbeat: Heartbeat }
  | { readonly ok: false; readonly reason: 'bad-json' | 'invalid'; readonly detail: string };

/** Parses a message body. Never throws: a bad message is a value, not an exception. */
export function parseHeartbeat(body: Uint8Array): ParseResult {
  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(body).toString('utf8'));
  } catch (err) {
    return { ok: false, reason: 'bad-json', detail: (err as Error).message.slice(0, 120) };
  }
  const parsed = heartbeatSchema.safeParse(data);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const detail = first ? `${first.path.join('.') || 'body'}: ${first.message}` : 'invalid';
    return { ok: false, reason: 'invalid', detail: detail.slice(0, 200) };
  }
  return { ok: true, heartbeat: parsed.data };
}
