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
  MAX_HOLDINGS,
  MAX_PREFIX,
  MAX_REPO_NAME,
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

/** A byte count discovery accepts: a whole, non-negative, safe number. */
function byteCount(n: number): number {
  return Number.isFinite(n) ? Math.min(Math.max(0, Math.floor(n)), Number.MAX_SAFE_INTEGER) : 0;
}

/**
 * What the gateway holds, within the heartbeat's limits. A repository name or prefix longer than
 * the schema allows comes from whatever a client asked the gateway for, so it is left out (and
 * counted) rather than cut: a shortened name would advertise something the cache does not hold.
 * Without this, one long name made every heartbeat invalid and the cache expired from discovery.
 */
export function holdingsFrom(s: GatewaySummary): { holds: Holdings; left: number } {
  const cvmfs = s.cvmfs.filter((c) => c.repo.length > 0 && c.repo.length <= MAX_REPO_NAME);
  const prefixes = s.prefixes.filter((p) => p.prefix.length > 0 && p.prefix.length <= MAX_PREFIX);
  const left = s.cvmfs.length - cvmfs.length + (s.prefixes.length - prefixes.length);
  return {
    holds: {
      // The memory tier holds copies of disk entries: counting both would count them twice.
      bytes: byteCount(s.cache.diskBytes),
      cvmfs: cvmfs.slice(0, MAX_HOLDINGS).map((c) => ({ repo: c.repo, bytes: byteCount(c.bytes) })),
      prefixes: prefixes
        .slice(0, MAX_HOLDINGS)
        .map((p) => ({ prefix: p.prefix, bytes: byteCount(p.bytes) })),
    },
    left,
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
