// The simulated world's data plane and its bill: links between sites and storage locations,
// caches that fill as jobs read, and the accounts (compute dollars by the millisecond, egress
// dollars and WAN bytes by the transfer).
//
// A link is one queue per direction: a transfer starts when the link is free and holds it for
// rtt + bytes/bandwidth, so concurrent readers share the link's rate as a FIFO, not as TCP's
// fair share. Aggregate throughput, and so makespans bounded by a link, come out right; the
// order in which one job's bytes arrive among others' does not (documented in BENCHMARKING.md).
// A read that finds the input already in flight to the same site's cache waits for that
// transfer instead of starting a second one, as a gateway collapses concurrent misses. Caches
// have no size limit: a scenario's datasets fit a site cache (the Lobster sites' did).

import { linkTo } from '../cost.ts';
import type { SiteCost, SiteView, StorageLocation } from '../model.ts';

export interface Place {
  readonly name: string;
  /** Storage location this place sits at (local reads), if any. */
  readonly at?: string;
  readonly cost: SiteCost;
}

interface LinkQueue {
  freeAt: number;
}

export interface Accounts {
  computeDollars: number;
  egressDollars: number;
  wanBytes: number;
  /** Paid core-milliseconds (instances from deploy to stop), and those that ran jobs. */
  paidCoreMs: number;
  busyCoreMs: number;
  /** WAN bytes by link, "from->to" (a storage location or place, "home" for results sent home). */
  byLink: Record<string, number>;
}

export class World {
  readonly accounts: Accounts = { computeDollars: 0, egressDollars: 0, wanBytes: 0, paidCoreMs: 0, busyCoreMs: 0, byLink: {} };
  /** Per place: input URL → when it is in the cache (bytes noted for holdings). */
  readonly caches = new Map<string, Map<string, { readyAt: number; bytes: number }>>();
  private readonly links = new Map<string, LinkQueue>();
  private readonly places = new Map<string, Place>();
  private readonly storage: readonly StorageLocation[];
  private readonly homeLocation: string | undefined;
  /** Dollars per millisecond of every instance running now, summed: compute cost integrates it. */
  private burnPerMs = 0;
  private paidCores = 0;
  private lastAt: number;

  constructor(places: readonly Place[], storage: readonly StorageLocation[], homeLocation: string | undefined, start: number) {
    for (const p of places) {
      this.places.set(p.name, p);
      this.caches.set(p.name, new Map());
    }
    this.storage = storage;
    this.homeLocation = homeLocation;
    this.lastAt = start;
  }

  /** Brings the compute account up to `now`. */
  advance(now: number): void {
    const dt = now - this.lastAt;
    if (dt > 0) {
      this.accounts.computeDollars += this.burnPerMs * dt;
      this.accounts.paidCoreMs += this.paidCores * dt;
    }
    this.lastAt = now;
  }

  /** An instance starts (or stops, with a negative sign) being billed. */
  bill(now: number, cores: number, pricePerCoreHour: number, sign: 1 | -1): void {
    this.advance(now);
    this.burnPerMs += (sign * cores * pricePerCoreHour) / 3_600_000;
    this.paidCores += sign * cores;
  }

  private location(url: string): StorageLocation | undefined {
    let best: StorageLocation | undefined;
    let len = -1;
    for (const loc of this.storage)
      for (const prefix of loc.urls)
        if (url.startsWith(prefix) && prefix.length > len) {
          best = loc;
          len = prefix.length;
        }
    return best;
  }

  /** True when the input sits where the place is: read locally, nothing crosses the WAN. */
  isLocal(place: string, url: string): boolean {
    const at = this.places.get(place)?.at;
    return at !== undefined && this.location(url)?.name === at;
  }

  private transfer(key: string, bytes: number, bandwidthBps: number, rttMs: number, now: number): number {
    this.accounts.byLink[key] = (this.accounts.byLink[key] ?? 0) + bytes;
    const q = this.links.get(key) ?? { freeAt: 0 };
    this.links.set(key, q);
    const start = Math.max(now, q.freeAt);
    q.freeAt = start + rttMs + ((bytes * 8) / bandwidthBps) * 1000;
    return q.freeAt;
  }

  /** When the input is readable at the place, starting the transfer if the cache lacks it. */
  fetch(place: string, url: string, bytes: number, now: number): number {
    if (this.isLocal(place, url)) return now;
    const cache = this.caches.get(place)!;
    const hit = cache.get(url);
    if (hit) return Math.max(now, hit.readyAt);
    const p = this.places.get(place)!;
    const loc = this.location(url);
    const link = linkTo({ name: p.name, cost: p.cost } as SiteView, url, this.storage);
    const readyAt = this.transfer(`${loc?.name ?? '?'}->${place}`, bytes, link.bandwidthBps, link.rttMs, now);
    this.accounts.wanBytes += bytes;
    this.accounts.egressDollars += (bytes / 1e9) * link.egressPerGb;
    cache.set(url, { readyAt, bytes });
    return readyAt;
  }

  /** When a job's results have reached the home location, sent from `place` at `now`. */
  sendHome(place: string, bytes: number, now: number): number {
    const p = this.places.get(place)!;
    if (bytes <= 0 || (this.homeLocation !== undefined && p.at === this.homeLocation)) return now;
    const link = this.homeLocation ? (p.cost.links[this.homeLocation] ?? p.cost.link) : p.cost.link;
    this.accounts.wanBytes += bytes;
    this.accounts.egressDollars += (bytes / 1e9) * p.cost.egressPerGb;
    return this.transfer(`${place}->home`, bytes, link.bandwidthBps, link.rttMs, now);
  }

  /** What each place's cache holds now (and what sits at its storage location), by input. */
  holdings(inputs: readonly string[], sizes: ReadonlyMap<string, number>, now: number): Map<string, Map<string, number>> {
    const out = new Map<string, Map<string, number>>();
    for (const [place, cache] of this.caches) {
      const held = new Map<string, number>();
      for (const url of inputs) {
        const c = cache.get(url);
        if (c && c.readyAt <= now) held.set(url, c.bytes);
        else if (this.isLocal(place, url)) held.set(url, sizes.get(url) ?? 0);
      }
      if (held.size) out.set(place, held);
    }
    return out;
  }
}
