// The registry: every cache discovery has heard from, in memory, keyed by the agent's uuid.
// Nothing is persisted on purpose: agents heartbeat every 30 s, so a restarted server has the
// whole picture back within one interval, and a stale disk copy could only advertise dead caches.
// Pure: the clock, the locator and the verification outcome come from outside.

import {
  type CacheKind,
  HEARTBEAT_EXTENSION_KEY,
  type Heartbeat,
  heartbeatPort,
  type Holdings,
  UPSTREAMS,
  type Upstream,
} from '../lib/heartbeat.ts';
import { CLOCK_DRIFT_S, orderingTimestamp } from './admission.ts';
import { placement, type Placed, type Point, type Ranked } from './ranking.ts';
import { SHOAL_MAX_LOAD, shoalCost } from './shoal-ranking.ts';
import { LatitudeIndex } from './spatial-index.ts';

/** Shoal's default max_load: 1 Gbit/s in KB/s (125,000,000 B/s / 1024), for agents that omit it. */
export const DEFAULT_MAX_LOAD = 122_070;
export const DEFAULT_EXPIRY_MS = 180_000;

export interface Location {
  readonly lat: number;
  readonly lon: number;
  /** Who placed it: the agent itself, the site map, or the IP database. */
  readonly source: 'heartbeat' | 'site-map' | 'ip-db' | 'query';
  readonly site?: string;
  readonly city?: string;
  readonly region?: string;
  readonly countryCode?: string;
  readonly countryName?: string;
  readonly continent?: string;
  readonly timeZone?: string;
  readonly postalCode?: string;
}

export type VerificationState = 'pending' | 'ok' | 'failed' | 'off';

export interface Verification {
  state: VerificationState;
  checkedAt?: number;
  nextAt: number;
  failures: number;
  error?: string;
  ms?: number;
}

export interface CacheEntry extends Placed {
  readonly id: string;
  hostname: string;
  port: number;
  /** Shoal's cache_type as sent ("squid" for estuary gateways too, so Shoal's /nearest finds them). */
  shoalType: string;
  kind: CacheKind;
  upstream: Upstream;
  load: number;
  maxLoad: number;
  publicIp?: string;
  privateIp?: string;
  externalIp?: string;
  globalAccess: boolean;
  readonly created: number;
  lastActive: number;
  agentTimestamp: number;
  skewS: number;
  clockInSync: boolean;
  /** 'unsigned' caches came in on the Shoal-compatibility path and are shown as such. */
  auth: 'signed' | 'unsigned';
  keyId?: string;
  site?: string;
  location?: Location;
  holds?: Holdings;
  /** Seconds between the agent's heartbeats, when it says (estuary agents do). */
  intervalS?: number;
  agentVerified?: boolean;
  verification: Verification;
  latRad?: number;
  lonRad?: number;
  cosLat?: number;
}

export interface ApplyMeta {
  readonly nowMs: number;
  readonly auth: 'signed' | 'unsigned';
  readonly keyId?: string;
  readonly skewS: number;
  readonly verify: boolean;
}

export type Locate = (h: Heartbeat) => Location | undefined;

function asUpstream(v: string | undefined): Upstream {
  return (UPSTREAMS as readonly string[]).includes(v ?? '') ? (v as Upstream) : 'both';
}

function kindOf(h: Heartbeat): CacheKind {
  const ext = h[HEARTBEAT_EXTENSION_KEY];
  if (ext) return ext.cacheKind;
  return h.cache_type === 'varnish' ? 'varnish' : 'squid';
}

/** The address a client should use: the private one inside its network, else the public one. */
export function proxyHost(e: CacheEntry, local: boolean): string {
  if (local && e.privateIp) return e.privateIp;
  return e.publicIp ?? e.externalIp ?? e.privateIp ?? e.hostname;
}

export function proxyUrl(e: CacheEntry, local: boolean): string {
  const host = proxyHost(e, local);
  return `http://${host.includes(':') ? `[${host}]` : host}:${e.port}`;
}

/** A cache with no public or external address can only be used from inside its own network. */
export function isPrivateOnly(e: CacheEntry): boolean {
  return e.publicIp === undefined && e.externalIp === undefined;
}

/** Which address discovery itself should test through. */
export function verifyHost(e: CacheEntry): string {
  return e.publicIp ?? e.externalIp ?? e.privateIp ?? e.hostname;
}

/**
 * A cache as Shoal's ranking sees it: its own load against Shoal's fixed max load. A second index
 * of these answers Shoal's endpoints with the same grid pruning as estuary's own ranking.
 */
interface ShoalView extends Placed {
  readonly entry: CacheEntry;
}

function shoalView(e: CacheEntry): ShoalView {
  return { entry: e, load: e.load, maxLoad: SHOAL_MAX_LOAD, latRad: e.latRad, lonRad: e.lonRad, cosLat: e.cosLat };
}

export class Registry {
  readonly #entries = new Map<string, CacheEntry>();
  readonly #index = new LatitudeIndex<CacheEntry>();
  readonly #shoalViews = new Map<string, ShoalView>();
  readonly #shoalIndex = new LatitudeIndex<ShoalView>();
  readonly #maxCaches: number;

  constructor(maxCaches = 100_000) {
    this.#maxCaches = maxCaches;
  }

  get size(): number {
    return this.#entries.size;
  }

  values(): IterableIterator<CacheEntry> {
    return this.#entries.values();
  }

  get(id: string): CacheEntry | undefined {
    return this.#entries.get(id);
  }

  isFull(id: string): boolean {
    return !this.#entries.has(id) && this.#entries.size >= this.#maxCaches;
  }

  /** Adds or refreshes a cache. Returns the entry and whether it is new or changed address. */
  apply(h: Heartbeat, meta: ApplyMeta, locate: Locate): { entry: CacheEntry; fresh: boolean } {
    const old = this.#entries.get(h.uuid);
    const ext = h[HEARTBEAT_EXTENSION_KEY];
    const port = heartbeatPort(h);
    // Shoal's server takes external_ip as the public address when an agent sends no public_ip
    // (a cloud cache behind NAT or a floating IP), and its clients only look at public_ip.
    const publicIp = h.public_ip ?? h.external_ip;
    const moved =
      !old ||
      old.port !== port ||
      old.publicIp !== publicIp ||
      old.externalIp !== h.external_ip ||
      old.privateIp !== h.private_ip;
    const location = !moved && old?.location && ext?.lat === undefined ? old.location : locate(h);
    const entry: CacheEntry = {
      id: h.uuid,
      hostname: h.hostname,
      port,
      shoalType: h.cache_type ?? 'squid',
      kind: kindOf(h),
      upstream: asUpstream(h.upstream),
      load: h.load,
      maxLoad: h.max_load && h.max_load > 0 ? h.max_load : DEFAULT_MAX_LOAD,
      publicIp,
      privateIp: h.private_ip,
      externalIp: h.external_ip,
      globalAccess: h.global_access ?? (h.public_ip !== undefined || h.external_ip !== undefined),
      created: old?.created ?? meta.nowMs,
      lastActive: meta.nowMs,
      agentTimestamp: orderingTimestamp(h.timestamp, meta.nowMs),
      skewS: meta.skewS,
      clockInSync: Math.abs(meta.skewS) <= CLOCK_DRIFT_S,
      auth: meta.auth,
      keyId: meta.keyId,
      site: ext?.site ?? location?.site,
      location,
      holds: ext?.holds,
      intervalS: ext?.intervalS,
      agentVerified: h.verified ?? ext?.selfTest?.ok,
      // A cache that moved is a different cache as far as reachability goes: test it again.
      verification:
        old && !moved
          ? old.verification
          : { state: meta.verify ? 'pending' : 'off', nextAt: meta.nowMs, failures: 0 },
      latRad: undefined,
      lonRad: undefined,
      cosLat: undefined,
    };
    // Every entry gets the same fields in the same order: ranking reads them 10,000 times per
    // query, and objects of one shape keep those reads fast.
    Object.assign(entry, placement(location));
    if (old) this.#index.remove(old);
    this.#entries.set(h.uuid, entry);
    this.#index.add(entry);
    this.#replaceView(h.uuid, shoalView(entry));
    return { entry, fresh: moved };
  }

  #replaceView(id: string, view: ShoalView | undefined): void {
    const old = this.#shoalViews.get(id);
    if (old) this.#shoalIndex.remove(old);
    if (view) {
      this.#shoalViews.set(id, view);
      this.#shoalIndex.add(view);
    } else this.#shoalViews.delete(id);
  }

  remove(id: string): boolean {
    const e = this.#entries.get(id);
    if (e) this.#index.remove(e);
    this.#replaceView(id, undefined);
    return this.#entries.delete(id);
  }

  /** The `n` cheapest caches by Shoal's own cost (shoal-ranking.ts), Shoal's order and digits. */
  nearestShoal(client: Point | undefined, n: number, accept: (e: CacheEntry) => boolean): Ranked<CacheEntry>[] {
    return this.#shoalIndex
      .nearest(client, n, (v) => accept(v.entry))
      .map((r) => ({
        item: r.item.entry,
        cost: client && r.distanceKm !== undefined ? shoalCost(r.distanceKm, r.item.load) : r.cost,
        distanceKm: r.distanceKm,
      }))
      .sort((a, b) => a.cost - b.cost);
  }

  /** The `n` cheapest caches for a client that pass `accept`, by Shoal's cost. */
  nearest(client: Point | undefined, n: number, accept: (e: CacheEntry) => boolean): Ranked<CacheEntry>[] {
    return this.#index.nearest(client, n, accept);
  }

  /** Drops caches not heard from within `expiryMs`; returns their ids. */
  sweep(nowMs: number, expiryMs = DEFAULT_EXPIRY_MS): string[] {
    const gone: string[] = [];
    for (const [id, e] of this.#entries) {
      if (nowMs - e.lastActive > expiryMs) {
        this.#entries.delete(id);
        this.#index.remove(e);
        this.#replaceView(id, undefined);
        gone.push(id);
      }
    }
    this.#index.rebuild();
    this.#shoalIndex.rebuild();
    return gone;
  }
}

export function isVerified(e: CacheEntry): boolean {
  return e.verification.state === 'ok' || e.verification.state === 'off';
}
