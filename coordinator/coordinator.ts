// The control loop: each interval, observe (batch system, then every site), step every drone's
// state machine, take one snapshot, let the policy decide, act. Observing and acting are the
// only I/O; they go through the adapters, never around them. A transition is written to the
// registry before the side effect it implies, so kill -9 at any point leaves a state whose
// actions can simply run again (coordinator/drone.ts).

import { backoffDelay } from '../lib/backoff.ts';
import type { Logger } from '../lib/log.ts';
import { ABSENT, type BatchSystem, type Queue, UNKNOWN_NODE } from './batch/types.ts';
import type { Clock } from './clock.ts';
import type { MachineType } from './config.ts';
import { locationOf, spentToday } from './cost.ts';
import { type DataSource, noData } from './data.ts';
import { DataCache } from './data-cache.ts';
import { type Action, release, step, type Step } from './drone.ts';
import { HOME_POOL, HOME_SITE, steerRequests, unsteered } from './steer.ts';
import {
  type Drone,
  droneFeatures,
  type InstanceStatus,
  type NodeView,
  poolKey,
  type PendingJob,
  type PoolView,
  type SiteView,
  type Snapshot,
  type StorageLocation,
} from './model.ts';
import { decide, type Decision, type PolicyOptions, type PoolReport } from './policy.ts';
import type { DroneRegistry } from './registry.ts';
import type { SiteAdapter } from './sites/types.ts';

export interface SiteSettings extends Omit<SiteView, 'healthy'> {
  readonly machineTypes: readonly string[];
}

export interface CoordinatorOptions {
  readonly registry: DroneRegistry;
  readonly batch: BatchSystem;
  readonly sites: ReadonlyMap<string, SiteAdapter>;
  readonly siteSettings: readonly SiteSettings[];
  readonly machineTypes: Readonly<Record<string, MachineType>>;
  readonly policy: Omit<PolicyOptions, 'intervalMs'>;
  readonly intervalMs: number;
  readonly clock: Clock;
  readonly log: Logger;
  /** Drone ids (= instance and node names) start with this, so each side can be listed. */
  readonly prefix: string;
  /** Called after each persisted state change (metrics). */
  readonly onTransition?: (drone: Drone, from: Drone['state'] | null) => void;
  /** Where the data is (holdings, sizes, pre-warming); nothing known by default. */
  readonly data?: DataSource;
  /** Storage locations, for the cost of moving inputs. */
  readonly storage?: readonly StorageLocation[];
  /** Spot pools beside on-demand ones at sites with a spot price (estuary's policy buys both). */
  readonly markets?: boolean;
  /** Steer placed jobs to their site's drones (coordinator/steer.ts); off when absent. */
  readonly steer?: { readonly homeFeature?: string };
}

export interface TickReport {
  readonly at: number;
  readonly batchHealthy: boolean;
  readonly unhealthySites: readonly string[];
  readonly pending: number;
  readonly pools: readonly PoolReport[];
  readonly decisions: readonly Decision[];
  /** Inputs each site's cache was asked to fetch this interval. */
  readonly prewarmed: Readonly<Record<string, readonly string[]>>;
}

const FINAL = new Set(['down']);

/** One point per interval: jobs by state, as KEK's Figure 8 draws them, and live drones. */
export interface TimelinePoint {
  readonly at: number;
  readonly pending: number;
  readonly home: number;
  readonly drones: number;
  readonly live: number;
}

/** A site that failed is left alone this long at most before it is asked again. */
const SITE_BACKOFF_MAX_MS = 5 * 60_000;

/** A day at the default 10 s interval; older points are dropped. */
const TIMELINE_POINTS = 8640;

export class Coordinator {
  private readonly o: CoordinatorOptions;
  private demand = new Map<string, number>();
  private nodes = new Map<string, NodeView>();
  private lastPending: PendingJob[] = [];
  private lastHome: Queue['home'];
  /** When each drone that stays busy was last seen busy, not yet written (see apply). */
  private readonly busyAt = new Map<string, number>();
  private readonly data: DataCache;
  /**
   * Jobs this coordinator steered, and where. In memory: after a restart they keep their
   * site_<name> requirement (read as the user's), so they still run there, just not moved.
   */
  private readonly steered = new Map<string, string>();
  /** Sites that failed: not asked again before `until` (exponential, from one interval). */
  private readonly backoff = new Map<string, { attempt: number; until: number }>();
  last: TickReport | undefined;
  /** Jobs by state over time, in memory (a restart starts a new picture). */
  readonly timeline: TimelinePoint[] = [];

  constructor(options: CoordinatorOptions) {
    this.o = options;
    this.data = new DataCache(options.data ?? noData, options.log, (url) => locationOf(url, options.storage) !== undefined);
  }

  get registry(): DroneRegistry {
    return this.o.registry;
  }

  /**
   * At start-up: every instance a site runs under our prefix that the registry does not know is
   * an orphan that would bill forever; stop it. Drones the registry knows are adopted as they
   * are: the next tick steps them from their persisted state.
   */
  async reconcile(): Promise<{ adopted: number; orphans: string[] }> {
    const known = new Set(this.o.registry.all().filter((d) => !FINAL.has(d.state)).map((d) => d.id));
    const orphans: string[] = [];
    for (const [name, site] of this.o.sites) {
      let ids: string[];
      try {
        ids = await site.list(this.o.prefix);
      } catch (err) {
        this.o.log.warn({ site: name, err: (err as Error).message }, 'cannot list instances; orphans at this site are checked next start');
        continue;
      }
      for (const id of ids.filter((i) => !known.has(i))) {
        orphans.push(id);
        this.o.log.warn({ site: name, drone: id }, 'orphan instance (unknown to the registry): stopping it');
        try {
          await this.o.batch.remove(id, true);
        } catch {
          // not a node, or busy: stopping the instance makes it go
        }
        await site.stop(id, {}).catch((err: Error) => this.o.log.error({ site: name, drone: id, err: err.message }, 'cannot stop orphan'));
      }
    }
    this.o.log.info({ adopted: known.size, orphans: orphans.length }, 'registry reconciled with the sites');
    return { adopted: known.size, orphans };
  }

  async tick(): Promise<TickReport> {
    const { batch, registry, log } = this.o;
    let batchHealthy = true;
    try {
      const [queue, nodes] = await Promise.all([batch.queue(this.o.prefix), batch.nodes(this.o.prefix)]);
      const steer = this.o.steer;
      if (steer) {
        const waiting = new Set(queue.pending.map((j) => j.id));
        for (const id of [...this.steered.keys()]) if (!waiting.has(id)) this.steered.delete(id);
      }
      this.lastPending = steer ? queue.pending.map((j) => unsteered(j, steer.homeFeature, this.steered)) : queue.pending;
      this.nodes = nodes;
      this.lastHome = queue.home;
      this.timeline.push({
        at: this.o.clock.now(),
        pending: queue.pending.length,
        home: queue.runningAtHome,
        drones: queue.runningOnDrones,
        live: registry.all().filter((d) => !FINAL.has(d.state)).length,
      });
      if (this.timeline.length > TIMELINE_POINTS) this.timeline.splice(0, this.timeline.length - TIMELINE_POINTS);
    } catch (err) {
      batchHealthy = false;
      log.warn({ err: (err as Error).message }, 'batch system unreachable: no drone is started or stopped this interval');
    }
    // Where the pending jobs' inputs are; never throws (a failure keeps the last answer).
    if (batchHealthy) await this.data.refresh(this.lastPending);
    const now = this.o.clock.now();
    const unhealthy = new Set([...this.backoff].filter(([, b]) => now < b.until).map(([s]) => s));
    const live = registry.all().filter((d) => !FINAL.has(d.state));
    const statuses = await Promise.all(live.map((d) => this.instanceStatus(d, unhealthy)));
    await Promise.all(
      live.map(async (d, i) => {
        const node = batchHealthy ? (this.nodes.get(d.id) ?? ABSENT) : UNKNOWN_NODE;
        // A busy drone's busy time moves every interval; it is kept here and written when it ends.
        const busyAt = this.busyAt.get(d.id);
        const seen = busyAt !== undefined && busyAt > d.lastBusyAt ? { ...d, lastBusyAt: busyAt } : d;
        await this.apply(d, step(seen, { instance: statuses[i]!, node }, this.o.clock.now(), this.timing(d)));
      }),
    );
    const snapshot = this.snapshot(batchHealthy, unhealthy);
    const result = decide(snapshot, this.demand, { ...this.o.policy, intervalMs: this.o.intervalMs });
    this.demand = new Map(result.demand);
    // The caches start fetching while the drones boot, so the first jobs start hot.
    const prewarmed = batchHealthy ? this.data.prewarm(result.prewarm, snapshot.now) : new Map();
    await this.act(result.decisions);
    if (batchHealthy && this.o.steer) await this.steer(result.placed, this.o.steer.homeFeature, result.awayFromHome);
    for (const p of result.pools)
      if (p.reason.why && result.decisions.some((d) => d.kind === 'start' && p.pool === poolKey(d.site, d.machineType, d.market)))
        log.info({ pool: p.pool, reason: p.reason }, String(p.reason.why));
    this.last = {
      at: snapshot.now,
      batchHealthy,
      unhealthySites: [...unhealthy],
      pending: snapshot.pending.length,
      pools: result.pools,
      decisions: result.decisions,
      prewarmed: Object.fromEntries(prewarmed),
    };
    return this.last;
  }

  private timing(d: Drone) {
    return { bootTimeout: this.settings(d.site).bootTimeout };
  }

  private settings(site: string): SiteSettings {
    return this.o.siteSettings.find((s) => s.name === site)!;
  }

  private async instanceStatus(d: Drone, unhealthy: Set<string>): Promise<InstanceStatus> {
    const site = this.o.sites.get(d.site);
    if (!site || unhealthy.has(d.site)) return 'unknown';
    try {
      const status = await site.status(d.id, d.instance);
      this.backoff.delete(d.site);
      return status;
    } catch (err) {
      unhealthy.add(d.site);
      this.siteFailed(d.site, err);
      return 'unknown';
    }
  }

  /**
   * A failing or slow site is left alone for a while (one interval, doubling up to 5 min), so
   * its timeouts do not slow every interval for the other sites; its drones keep their state.
   */
  private siteFailed(site: string, err: unknown): void {
    const attempt = (this.backoff.get(site)?.attempt ?? 0) + 1;
    // No jitter (random 1): one coordinator has no herd to spread.
    const delay = backoffDelay(attempt - 1, { baseMs: this.o.intervalMs, maxMs: SITE_BACKOFF_MAX_MS }, () => 1);
    this.backoff.set(site, { attempt, until: this.o.clock.now() + delay });
    this.o.log.warn({ site, err: (err as Error).message, retryInS: delay / 1000 }, 'site unreachable: its drones keep their state');
  }

  /** Persists the step, then performs its actions; a failed action is retried next interval. */
  private async apply(d: Drone, s: Step): Promise<void> {
    const now = this.o.clock.now();
    const changed = s.state !== d.state;
    const next: Drone = changed
      ? { ...d, state: s.state, reason: s.reason, stateSince: now, lastBusyAt: s.lastBusyAt }
      : { ...d, lastBusyAt: s.lastBusyAt };
    // Only changes are written: a drone that stays busy moves its busy time in memory, and the
    // registry gets it when the drone falls idle or changes state (a restart in between sees
    // the time it became busy: its idle time then starts at most one busy spell early).
    const stillBusy = !changed && s.lastBusyAt === now && this.busyAt.has(d.id);
    const busyNow = !changed && s.lastBusyAt === now;
    if (changed || (!stillBusy && s.lastBusyAt !== d.lastBusyAt)) this.o.registry.put(next, now);
    if (busyNow) this.busyAt.set(d.id, now);
    else this.busyAt.delete(d.id);
    if (changed) {
      this.o.log.info({ drone: d.id, from: d.state, to: s.state, reason: s.reason }, 'drone transition');
      this.o.onTransition?.(next, d.state);
    }
    for (const action of s.actions) {
      try {
        await this.perform(next, action);
      } catch (err) {
        this.o.log.warn({ drone: d.id, action, err: (err as Error).message }, 'action failed; retried next interval');
        if (action === 'deploy' || action === 'stop') this.siteFailed(d.site, err);
        if (action === 'deploy') return;
      }
    }
  }

  private async perform(d: Drone, action: Action): Promise<void> {
    const site = this.o.sites.get(d.site)!;
    switch (action) {
      case 'deploy': {
        const instance = await site.deploy(this.spec(d));
        this.o.registry.put({ ...this.o.registry.get(d.id)!, instance }, this.o.clock.now());
        return;
      }
      case 'integrate':
        return this.o.batch.integrate(d.id, `estuary ${d.site}/${d.machineType}`);
      case 'drain':
        return this.o.batch.drain(d.id, `estuary: ${d.reason.rule}`);
      case 'remove-node':
        return this.o.batch.remove(d.id, d.state === 'lost' || d.state === 'error');
      case 'stop':
        return site.stop(d.id, d.instance);
    }
  }

  private spec(d: Drone) {
    const type = this.o.machineTypes[d.machineType]!;
    return {
      id: d.id,
      site: d.site,
      machineType: d.machineType,
      cores: type.cores,
      memoryMb: Math.floor(type.memory / 1_048_576),
      features: droneFeatures(d.site, d.machineType, type.features),
      ...(d.market ? { market: d.market } : {}),
    };
  }

  snapshot(batchHealthy: boolean, unhealthy: ReadonlySet<string>): Snapshot {
    const all = this.o.registry.all();
    const drones = all.filter((d) => !FINAL.has(d.state));
    const now = this.o.clock.now();
    const pools: PoolView[] = [];
    for (const site of this.o.siteSettings)
      for (const type of site.machineTypes) {
        const mt = this.o.machineTypes[type]!;
        const markets = this.o.markets && site.cost?.spotPerCoreHour !== undefined ? (['on-demand', 'spot'] as const) : (['on-demand'] as const);
        for (const market of markets)
          pools.push({
            key: poolKey(site.name, type, market),
            site: site.name,
            machineType: type,
            // With markets, on-demand is said explicitly: an ec2 site configured `spot: true`
            // must not buy spot for a drone the policy priced on demand.
            ...(this.o.markets ? { market } : {}),
            cores: mt.cores,
            memoryMb: Math.floor(mt.memory / 1_048_576),
            features: droneFeatures(site.name, type, mt.features),
            drones: drones
              // Without spot pools every drone of the type counts in its one pool.
              .filter((d) => d.site === site.name && d.machineType === type && (markets.length === 1 || (d.market === 'spot') === (market === 'spot')))
              .map((drone) => ({ drone, node: batchHealthy ? (this.nodes.get(drone.id) ?? ABSENT) : UNKNOWN_NODE })),
          });
      }
    const coresOf = (t: string) => this.o.machineTypes[t]?.cores ?? 0;
    return {
      now,
      batchHealthy,
      pending: this.lastPending,
      sites: this.o.siteSettings.map((s) => ({ ...s, healthy: !unhealthy.has(s.name) && this.o.sites.has(s.name), spentToday: spentToday(all, s, coresOf, now) })),
      pools,
      ...(this.o.storage ? { storage: this.o.storage } : {}),
      holdings: new Map([...this.data.holdings].map(([site, h]) => [site, h])),
      sizes: new Map(this.data.sizes),
      ...(this.lastHome ? { home: { ...this.lastHome, ...(this.o.steer?.homeFeature ? { feature: this.o.steer.homeFeature } : {}) } } : {}),
    };
  }

  /** Makes each placed job require its site's drones; a failure is retried next interval. */
  private async steer(placed: ReadonlyMap<string, readonly PendingJob[]>, homeFeature: string | undefined, awayFromHome?: ReadonlySet<string>): Promise<void> {
    const siteOfPool = new Map(this.o.siteSettings.flatMap((s) => s.machineTypes.flatMap((t) => [[poolKey(s.name, t), s.name], [poolKey(s.name, t, 'spot'), s.name]] as const)));
    const placedAt = new Map<string, string>();
    for (const [pool, jobs] of placed) for (const j of jobs) placedAt.set(j.id, pool === HOME_POOL ? HOME_SITE : (siteOfPool.get(pool) ?? ''));
    for (const r of steerRequests(this.lastPending, placedAt, homeFeature, awayFromHome)) {
      try {
        await this.o.batch.steer(r.jobIds, r.features);
        for (const id of r.jobIds) {
          if (r.site) this.steered.set(id, r.site);
          else this.steered.delete(id);
        }
        this.o.log.info({ site: r.site || null, jobs: r.jobIds.length, features: r.features }, r.site ? `steered ${r.jobIds.length} job(s) to ${r.site}` : `lifted the steering of ${r.jobIds.length} job(s)`);
      } catch (err) {
        this.o.log.warn({ site: r.site, err: (err as Error).message }, 'cannot steer jobs; tried again next interval');
      }
    }
  }

  private async act(decisions: readonly Decision[]): Promise<void> {
    await Promise.all(
      decisions.map(async (dec) => {
        const now = this.o.clock.now();
        if (dec.kind === 'release') {
          const d = this.o.registry.get(dec.droneId);
          if (d && d.state === 'available') await this.apply(d, release(d, dec.reason));
          return;
        }
        const id = `${this.o.prefix}${dec.site}-${this.o.registry.nextSerial()}`;
        const drone: Drone = {
          id,
          site: dec.site,
          machineType: dec.machineType,
          ...(dec.market ? { market: dec.market } : {}),
          state: 'requested',
          createdAt: now,
          stateSince: now,
          lastBusyAt: now,
          instance: {},
          reason: dec.reason,
          startReason: dec.reason,
        };
        this.o.registry.put(drone, now);
        this.o.onTransition?.(drone, null);
        this.o.log.info({ drone: id, site: dec.site, machineType: dec.machineType, reason: dec.reason }, 'starting drone');
        try {
          await this.perform(drone, 'deploy');
        } catch (err) {
          const failed: Drone = { ...this.o.registry.get(id)!, state: 'error', stateSince: this.o.clock.now(), reason: { rule: 'deploy-failed', error: (err as Error).message.slice(0, 200) } };
          this.o.registry.put(failed, this.o.clock.now());
          this.o.onTransition?.(failed, 'requested');
          this.o.log.warn({ drone: id, err: (err as Error).message }, 'site refused the drone; cleaning up');
          this.siteFailed(dec.site, err);
        }
      }),
    );
  }

  /** Runs tick() every interval until `signal` aborts; a failing tick is logged, not fatal. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const started = this.o.clock.now();
      try {
        await this.tick();
      } catch (err) {
        this.o.log.error({ err }, 'control loop interval failed');
      }
      const spent = this.o.clock.now() - started;
      await this.o.clock.sleep(Math.max(0, this.o.intervalMs - spent), signal);
    }
  }
}
