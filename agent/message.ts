// The heartbeat an agent sends: Shoal's fields, so a Shoal server ranks it, and estuary's under
// `estuary_v1`. An estuary gateway is advertised with Shoal's cache_type "squid" (it does a
// Squid's job), so Shoal's /nearest finds it; its real kind is in estuary_v1.cacheKind. Pure.

import type { GatewaySummary } from '../lib/gateway-summary.ts';
import {
  type CacheKind,
  HEARTBEAT_EXTENSION_KEY,
  HEARTBEAT_EXTENSION_VERSION,
  type Heartbeat,
  type Holdings,
  type Upstream,
} from '../lib/heartbeat.ts';

export interface Identity {
  readonly uuid: string;
  readonly hostname: string;
  readonly port: number;
  readonly kind: CacheKind;
  readonly upstream: Upstream;
  readonly maxLoad: number;
  readonly publicIp?: string;
  readonly privateIp?: string;
  /** The address the world sees when the host has no public one (learned from --external-ip-url). */
  externalIp?: string;
  readonly site?: string;
  readonly lat?: number;
  readonly lon?: number;
  readonly intervalS: number;
}

export interface Observation {
  readonly nowMs: number;
  readonly load: number;
  readonly selfTest?: { ok: boolean; ms: number };
  readonly holds?: Holdings;
}

export function holdingsFrom(s: GatewaySummary): Holdings {
  return {
    bytes: s.cache.memoryBytes + s.cache.diskBytes,
    cvmfs: s.cvmfs.slice(0, 32).map((c) => ({ repo: c.repo, bytes: c.bytes })),
    prefixes: s.prefixes.slice(0, 32).map((p) => ({ prefix: p.prefix, bytes: p.bytes })),
  };
}

export function buildHeartbeat(id: Identity, obs: Observation, goodbye = false): Heartbeat {
  const hb: Heartbeat = {
    uuid: id.uuid,
    hostname: id.hostname,
    cache_port: id.port,
    cache_type: id.kind === 'varnish' ? 'varnish' : 'squid',
    verified: obs.selfTest?.ok ?? false,
    max_load: id.maxLoad,
    upstream: id.upstream,
    timestamp: obs.nowMs / 1000,
    load: obs.load,
    [HEARTBEAT_EXTENSION_KEY]: {
      version: HEARTBEAT_EXTENSION_VERSION,
      cacheKind: id.kind,
      ...(id.site ? { site: id.site } : {}),
      ...(id.lat !== undefined && id.lon !== undefined ? { lat: id.lat, lon: id.lon } : {}),
      ...(obs.holds ? { holds: obs.holds } : {}),
      ...(obs.selfTest ? { selfTest: { ok: obs.selfTest.ok, ms: Math.round(obs.selfTest.ms) } } : {}),
      intervalS: id.intervalS,
      ...(goodbye ? { goodbye: true } : {}),
    },
  };
  // Shoal's rule: public_ip when the host has one, else external_ip.
  if (id.publicIp) hb.public_ip = id.publicIp;
  else if (id.externalIp) hb.external_ip = id.externalIp;
  if (id.privateIp) hb.private_ip = id.privateIp;
  return hb;
}
