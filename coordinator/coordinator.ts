// The control loop: each interval, observe (batch system, then every site), step every drone's
// state machine, take one snapshot, let the policy decide, act. Observing and acting are the
// only I/O; they go through the adapters, never around them. A transition is written to the
// registry before the side effect it implies, so kill -9 at any point leaves a state whose
// actions can simply run again (coordinator/drone.ts).

import type { Logger } from '../lib/log.ts';
import { ABSENT, type BatchSystem, type LimitedJob, type Queue } from './batch/types.ts';
import { buildPools } from './pools.ts';
import { BatchReader } from './batch-read.ts';
import { DroneRunner } from './drone-runner.ts';
import type { Clock } from './clock.ts';
import type { MachineType } from './config.ts';
import { committedToday, locationOf } from './cost.ts';
import { type DataSource, noData } from './data.ts';
import { DataCache } from './data-cache.ts';
import { release } from './drone.ts';
import { type HistoryStatus, RunHistory } from './run-history.ts';
import { MixedHolds, mixedHoldMessage } from './steer.ts';
import { Steering } from './steering.ts';
import {
  type Drone,
  type NodeView,
  poolKey,
  type PendingJob,
  type RunningJob,
  type SiteView,
  type Snapshot,
  type StorageLocation,
} from './model.ts';
import { whyNoPool } from './placement.ts';
import { decide, type Decision, type PolicyOptions, type PoolReport } from './policy.ts';
import type { DroneRegistry } from './registry.ts';
import { sweepOrphans } from './orphans.ts';
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
  readonly steer?: { readonly homeFeature?: string; readonly hold?: boolean };
  /** Learn run times from finished jobs, read this often (run-history.ts); off when absent. */
  readonly history?: { readonly everyMs: number };
}

export interface TickReport {
  readonly at: number;
  readonly batchHealthy: boolean;
  /** Why the last read of the batch system failed (its own words), null when it answered. */
  readonly batchError: string | null;
  /** Whether the batch system has answered at least once since start. */
  readonly batchEverRead: boolean;
  readonly unhealthySites: readonly string[];
  /** Why each unhealthy site is so. */
  readonly siteProblems: Readonly<Record<string, string>>;
  /** Pending jobs no pool could run at all, with why (the first UNPLACEABLE_LISTED). */
  readonly unplaceable: readonly { readonly job: string; readonly why: string }[];
  readonly unplaceableCount: number;
  /** What is wrong with the site's set-up that the loop can see but not mend, in words. */
  readonly warnings: readonly string[];
  readonly pending: number;
  readonly pools: readonly PoolReport[];
  readonly decisions: readonly Decision[];
  /** Inputs each site's cache was asked to fetch this interval. */
  readonly prewarmed: Readonly<Record<string, readonly string[]>>;
  /** Run times learned from finished jobs: from where, how many, and why not (null: not learned). */
  readonly history?: HistoryStatus | null;
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

/** Unplaceable jobs listed by the API and page (the count is always whole). */
const UNPLACEABLE_LISTED = 50;

/** A refusal that lasts is logged again this often. */
const REFUSAL_LOG_EVERY_MS = 10 * 60_000;

/** A day at the default 10 s interval; older points are dropped. */
const TIMELINE_POINTS = 8640;

export class Coordinator {
  private readonly o: CoordinatorOptions;
  private demand = new Map<string, number>();
  private nodes = new Map<string, NodeView>();
  private lastPending: PendingJob[] = [];
  private readonly reader: BatchReader;
  private batchError: string | null = null;
  private batchEverRead = false;
  private lastHome: Queue['home'];
  private lastLimited: readonly LimitedJob[] = [];
  private lastRunning: readonly RunningJob[] | undefined;
  private truncationLogged = false;
  private readonly data: DataCache;
  private readonly history: RunHistory | undefined;
  private readonly steering: Steering | undefined;
  private readonly heldWarnings = new MixedHolds();
  private readonly runner: DroneRunner;
  /** When a budget refusal was last logged, per site. */
  private readonly refusalLogged = new Map<string, number>();
  last: TickReport | undefined;
  /** Jobs by state over time, in memory (a restart starts a new picture). */
  readonly timeline: TimelinePoint[] = [];

  constructor(options: CoordinatorOptions) {
    this.o = options;
    this.reader = new BatchReader(options.batch, options.prefix, options.clock);
    this.runner = new DroneRunner({
      ...options,
      bootTimeout: (site) => this.settings(site).bootTimeout,
    });
    this.data = new DataCache(options.data ?? noData, options.log, (url) => locationOf(url, options.storage) !== undefined);
    if (options.steer) this.steering = new Steering({ ...options.steer, batch: options.batch, log: options.log, sites: options.siteSettings });
    if (options.history) this.history = new RunHistory(options.batch, options.clock, options.log, options.history.everyMs);
  }

  get registry(): DroneRegistry {
    return this.o.registry;
  }

  /**
   * At start-up: every instance a site runs under our prefix that the registry does not know is
   * an orphan that would bill forever; stop it. Drones the registry knows are adopted as they
   * are: the next tick steps them from their persisted state. Each site is swept in its own turn
   * (coordinator/site-calls.ts), so a site whose list hangs delays no other site's first drone,
   * and its own drones start only after its sweep (a drone started meanwhile is in the registry
   * when the list is judged, never taken for an orphan). Resolves once every site is swept.
   */
  async reconcile(): Promise<{ adopted: number; orphans: string[] }> {
    const adopted = this.o.registry.all().filter((d) => !FINAL.has(d.state)).length;
    const orphans: string[] = [];
    const swept = [...this.o.sites].map(([name, site]) =>
      this.runner.calls.enqueue(name, async () => {
        const found = await sweepOrphans(name, site, this.o);
        orphans.push(...found);
        this.o.log.info({ site: name, orphans: found.length }, 'site reconciled with the registry');
      }),
    );
    await Promise.all(swept);
    this.o.log.info({ adopted, orphans: orphans.length }, 'registry reconciled with the sites');
    return { adopted, orphans };
  }

  /** One interval, then waits for every site call it made (tests and the simulator). */
  async tick(): Promise<TickReport> {
    const report = await this.interval();
    await this.settle();
    return report;
  }

  /** Site calls and the history read still running (the loop never waits for them; a stop waits a little). */
  async settle(): Promise<void> {
    await Promise.all([this.runner.calls.settle(), this.history?.settle()]);
  }

  /**
   * Sites the policy must not start drones at now: an operation backed off, new drones held
   * back after failed instances, or no adapter; with the reason, for the API and the page.
   */
  private unhealthySites(): Map<string, string> {
    const now = this.o.clock.now();
    const out = new Map<string, string>();
    for (const s of this.o.siteSettings) {
      const failing = this.runner.calls.failing(s.name, now).filter((f) => f.op !== 'stop');
      const instances = this.runner.failures.unhealthy(s.name);
      if (!this.o.sites.has(s.name)) out.set(s.name, 'no adapter');
      else if (failing.length) out.set(s.name, failing.map((f) => `${f.op} failing, retried in ${f.retryInS} s: ${f.error}`).join('; '));
      else if (instances && this.runner.failures.holding(s.name, now)) out.set(s.name, instances);
      else if (instances) out.set(s.name, `${instances}; trying one drone again`);
    }
    return out;
  }

  private async interval(): Promise<TickReport> {
    const { registry, log } = this.o;
    const read = await this.reader.read(registry.all().filter((d) => !FINAL.has(d.state)));
    const batchHealthy = read.ok;
    if (read.ok) {
      this.batchError = null;
      this.batchEverRead = true;
      const { queue, nodes } = read;
      this.lastPending = this.steering ? this.steering.observe(queue.pending) : queue.pending;
      for (const id of this.heldWarnings.fresh(this.lastPending)) log.warn({ job: id, code: 'ESTUARY_CO_HOLD_MIXED' }, mixedHoldMessage(id));
      this.nodes = nodes;
      this.lastHome = queue.home;
      this.lastLimited = queue.limited ?? [];
      this.lastRunning = queue.running;
      if (queue.truncatedArrays && !this.truncationLogged) {
        this.truncationLogged = true;
        log.warn({ arrays: queue.truncatedArrays }, 'the batch system printed job arrays\' task lists cut short ("..."); each counts as the tasks listed');
      }
      this.timeline.push({
        at: this.o.clock.now(),
        pending: queue.pending.length,
        home: queue.runningAtHome,
        drones: queue.runningOnDrones,
        live: registry.all().filter((d) => !FINAL.has(d.state)).length,
      });
      if (this.timeline.length > TIMELINE_POINTS) this.timeline.splice(0, this.timeline.length - TIMELINE_POINTS);
    } else {
      this.batchError = read.error;
      log.warn({ err: read.error }, 'batch system unreadable: no drone is started or stopped this interval');
    }
    // Run times of finished jobs, every history-every, read in the background: a slow sacct
    // never holds the interval, and its answer is used from the interval after it came. Never
    // throws (a failure is shown).
    if (batchHealthy) this.history?.start();
    // Where the pending jobs' inputs are; never throws (a failure keeps the last answer).
    if (batchHealthy) await this.data.refresh(this.lastPending);
    const live = registry.all().filter((d) => !FINAL.has(d.state));
    // While the batch system cannot be read every drone is frozen as it is: no step, no action,
    // so nothing is concluded from a node list that may be a controller's outage. Each site's
    // drones are stepped in that site's own turn, in the background (coordinator/site-calls.ts).
    // The loop waits for them at most half an interval, so a decision normally sees this
    // interval's states, and a site that hangs costs the others nothing (their cadence holds).
    if (batchHealthy) {
      const stepped = [...this.o.sites.keys()].map((site) => this.runner.stepSite(site, live.filter((d) => d.site === site).map((d) => d.id), this.nodes, ABSENT));
      const enough = new AbortController();
      await Promise.race([Promise.all(stepped), this.o.clock.sleep(this.o.intervalMs / 2, enough.signal)]);
      enough.abort();
    }
    const unhealthy = this.unhealthySites();
    const holding = new Set([...unhealthy.keys()].filter((site) => !/trying one drone again/.test(unhealthy.get(site)!)));
    const snapshot = this.snapshot(batchHealthy, holding);
    // Jobs no drone of any pool could run are not demand; they are listed, not silently pending:
    // those held back by an accounting limit a drone cannot raise first, with Slurm's reason.
    const limited = this.lastLimited.map((j) => ({ job: j.id, why: `held by the limit ${j.reason} (a drone adds cores, not allowance)` }));
    const unplaceable = limited.concat(snapshot.pending.flatMap((j) => {
      const why = whyNoPool(j, snapshot.pools);
      return why ? [{ job: j.id, why }] : [];
    }));
    const result = decide(snapshot, this.demand, { ...this.o.policy, intervalMs: this.o.intervalMs });
    this.demand = new Map(result.demand);
    // The caches start fetching while the drones boot, so the first jobs start hot.
    const prewarmed = batchHealthy ? this.data.prewarm(result.prewarm, snapshot.now) : new Map();
    await this.act(result.decisions);
    if (batchHealthy && this.steering) await this.steering.steer(this.lastPending, result.placed, this.steering.homeFeature(snapshot), result.awayFromHome);
    this.logRefusals(result.pools);
    for (const p of result.pools)
      if (p.reason.why && result.decisions.some((d) => d.kind === 'start' && p.pool === poolKey(d.site, d.machineType, d.market)))
        log.info({ pool: p.pool, reason: p.reason }, String(p.reason.why));
    this.last = {
      at: snapshot.now,
      batchHealthy,
      batchError: this.batchError,
      batchEverRead: this.batchEverRead,
      unhealthySites: [...unhealthy.keys()],
      siteProblems: Object.fromEntries(unhealthy),
      unplaceable: unplaceable.slice(0, UNPLACEABLE_LISTED),
      unplaceableCount: unplaceable.length,
      warnings: this.steering?.warning ? [this.steering.warning] : [],
      pending: snapshot.pending.length,
      pools: result.pools,
      decisions: result.decisions,
      prewarmed: Object.fromEntries(prewarmed),
      history: this.history?.status ?? null,
    };
    return this.last;
  }

  private settings(site: string): SiteSettings {
    return this.o.siteSettings.find((s) => s.name === site)!;
  }

  snapshot(batchHealthy: boolean, unhealthy: ReadonlySet<string>): Snapshot {
    const all = this.o.registry.all();
    const now = this.o.clock.now();
    const live = all.filter((d) => !FINAL.has(d.state));
    const pools = buildPools(this.o.siteSettings, this.o.machineTypes, live, batchHealthy ? this.nodes : undefined, this.o.markets ?? false);
    const coresOf = (t: string) => this.o.machineTypes[t]?.cores ?? 0;
    return {
      now,
      batchHealthy,
      pending: this.lastPending,
      sites: this.o.siteSettings.map((s) => ({ ...s, healthy: !unhealthy.has(s.name) && this.o.sites.has(s.name), spentToday: committedToday(all, s, coresOf, now) })),
      pools,
      ...(this.o.storage ? { storage: this.o.storage } : {}),
      holdings: new Map([...this.data.holdings].map(([site, h]) => [site, h])),
      sizes: new Map(this.data.sizes),
      ...(this.history ? { runTimes: this.history.summary() } : {}),
      ...(this.lastHome ? { home: { ...this.lastHome, ...(this.o.steer?.homeFeature ? { feature: this.o.steer.homeFeature } : {}) } } : {}),
      startedLastMinute: all.filter((d) => now - d.createdAt < 60_000).length,
      ...(this.lastRunning ? { running: this.lastRunning } : {}),
    };
  }

  /**
   * A budget refusal is logged when it first happens at a site, then at most every 10 minutes
   * while it lasts (a refused start repeats every interval; the API and page always show it).
   */
  private logRefusals(pools: readonly PoolReport[]): void {
    const now = this.o.clock.now();
    for (const p of pools) {
      if (p.reason.rule !== 'budget') continue;
      const site = p.pool.split('/')[0]!;
      const last = this.refusalLogged.get(site);
      if (last !== undefined && now - last < REFUSAL_LOG_EVERY_MS) continue;
      this.refusalLogged.set(site, now);
      this.o.log.warn({ pool: p.pool, reason: p.reason }, String(p.reason.why));
    }
  }

  private async act(decisions: readonly Decision[]): Promise<void> {
    for (const dec of decisions) {
      if (dec.kind === 'start') {
        this.runner.start(dec, `${this.o.prefix}${dec.site}-${this.o.registry.nextSerial()}`);
        continue;
      }
      const d = this.o.registry.get(dec.droneId);
      // A drain is a batch-system call: done now, so the node takes no new job from here on.
      if (d && d.state === 'available') await this.runner.apply(d, release(d, dec.reason));
    }
  }

  /** Runs tick() every interval until `signal` aborts; a failing tick is logged, not fatal. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const started = this.o.clock.now();
      try {
        await this.interval();
      } catch (err) {
        this.o.log.error({ err }, 'control loop interval failed');
      }
      const spent = this.o.clock.now() - started;
      await this.o.clock.sleep(Math.max(0, this.o.intervalMs - spent), signal);
    }
  }
}
