// The policy: from one immutable snapshot to decisions, each with its reason as data. For every
// pool (site × machine type) it measures supply, allocation and utilisation as TARDIS does, asks
// the pool's controller for demand, clamps it with COBalD's Standardiser (minimum, quota,
// granularity), and then acts like COBalD's FactoryPool: start drones while their demand falls
// short, release the least used drones while it exceeds. Drones idle past the site's idle time
// are released too, never before their minimum lifetime. Pure: no I/O, no clock but snapshot.now.

import { type Controller, type PoolState, standardise } from './controllers.ts';
import { budgetLeft, cents, costOf, droneBudget, pricePerCoreHour } from './cost.ts';
import type { Plan } from './estuary-policy.ts';
import type { IdleRelease } from './idle-release.ts';
import type { Drone, DroneView, Market, PendingJob, PoolView, Reason, Snapshot } from './model.ts';
import type { Placement } from './placement.ts';

const DEFAULT_RUNTIME_MS = 3_600_000;

export type Decision =
  | {
      readonly kind: 'start';
      readonly site: string;
      readonly machineType: string;
      readonly market?: Market;
      readonly reason: Reason;
      /** Dollars the drone is budgeted at, held against the site's budget until it ends. */
      readonly budget?: number;
      /** Its price now, kept with it: a later change of the config does not re-price its past. */
      readonly pricePerCoreHour?: number;
    }
  | { readonly kind: 'release'; readonly droneId: string; readonly reason: Reason };

export interface PoolReport {
  readonly pool: string;
  readonly supply: number;
  readonly demand: number;
  readonly allocation: number;
  readonly utilisation: number;
  readonly pendingJobs: number;
  readonly reason: Reason;
}

export interface PolicyResult {
  readonly decisions: readonly Decision[];
  readonly pools: readonly PoolReport[];
  /** Demand per pool, handed back next interval (COBalD keeps demand on the pool). */
  readonly demand: ReadonlyMap<string, number>;
  /** The pending jobs each pool counted as demand. */
  readonly placed: ReadonlyMap<string, readonly PendingJob[]>;
  /** Per site, inputs its cache should fetch now for the jobs placed there (estuary's policy). */
  readonly prewarm: ReadonlyMap<string, readonly string[]>;
  /** Placed jobs that should not run on the home nodes: their inputs are not there (estuary's policy). */
  readonly awayFromHome?: ReadonlySet<string>;
}

export interface PolicyOptions {
  readonly controllerFor: (pool: PoolView) => Controller;
  readonly placement: Placement;
  readonly intervalMs: number;
  readonly granularity?: number;
  /**
   * estuary's policy (coordinator/estuary-policy.ts): when given, it places the jobs and sets
   * every pool's demand, instead of `placement` and the controller.
   */
  readonly plan?: (snapshot: Snapshot) => Plan;
  /** Run time a drone is budgeted for when its jobs give no time limit (default 1 h). */
  readonly runtimeMs?: number;
}

const WAITING = new Set(['requested', 'unknown', 'booting', 'integrating']);

function usage(d: DroneView): { alloc: number; util: number } {
  const cpu = d.node.cpus > 0 ? d.node.allocCpus / d.node.cpus : 0;
  const mem = d.node.memoryMb > 0 ? d.node.allocMemoryMb / d.node.memoryMb : 0;
  return { alloc: Math.max(cpu, mem), util: Math.min(cpu, mem) };
}

const isAvailable = (d: DroneView) => d.drone.state === 'available' && d.node.status === 'available';

export function poolState(
  pool: PoolView,
  snapshot: Snapshot,
  demand: number | undefined,
  pending: PoolState['pending'],
  intervalMs: number,
  maxDrones: number,
  startedLastMinute = snapshot.startedLastMinute ?? 0,
): PoolState {
  const available = pool.drones.filter(isAvailable);
  const live = pool.drones.filter((d) => WAITING.has(d.drone.state) || d.drone.state === 'available');
  const waiting = pool.drones.filter((d) => WAITING.has(d.drone.state));
  const idle = available.filter((d) => d.node.allocCpus === 0);
  const mean = (xs: number[]) => (xs.length === 0 ? 1 : xs.reduce((a, b) => a + b, 0) / xs.length);
  const liveCores = live.length * pool.cores;
  return {
    now: snapshot.now,
    intervalMs,
    demand: demand ?? liveCores,
    supply: available.length * pool.cores,
    allocation: mean(available.map((d) => usage(d).alloc)),
    utilisation: mean(available.map((d) => usage(d).util)),
    cores: pool.cores,
    maxDrones,
    liveCores,
    waitingCores: waiting.length * pool.cores,
    idleCores: idle.length * pool.cores,
    busyDrones: available.length - idle.length,
    idleDrones: idle.length,
    waitingDrones: waiting.length,
    pending,
    startedLastMinute,
  };
}

export function decide(
  snapshot: Snapshot,
  previous: ReadonlyMap<string, number>,
  options: PolicyOptions,
): PolicyResult {
  const decisions: Decision[] = [];
  const reports: PoolReport[] = [];
  const demand = new Map<string, number>();
  const plan = options.plan?.(snapshot);
  const placed = plan ? new Map([...plan].map(([k, v]) => [k, v.jobs])) : options.placement(snapshot);
  const prewarm = new Map<string, string[]>();
  if (plan)
    for (const pool of snapshot.pools) {
      const urls = plan.get(pool.key)?.prewarm ?? [];
      if (urls.length) prewarm.set(pool.site, [...new Set([...(prewarm.get(pool.site) ?? []), ...urls])]);
    }
  // Dollars this interval's starts are budgeted at, per site (cost.ts droneBudget).
  const reserved = new Map<string, number>();
  // The quota counts every drone not yet down: one being stopped may still be billed.
  const liveAtSite = new Map<string, number>();
  for (const pool of snapshot.pools)
    for (const d of pool.drones)
      if (d.drone.state !== 'down') liveAtSite.set(pool.site, (liveAtSite.get(pool.site) ?? 0) + 1);
  let startedNow = 0;

  for (const pool of snapshot.pools) {
    const site = snapshot.sites.find((s) => s.name === pool.site)!;
    const pending = placed.get(pool.key) ?? [];
    const state = poolState(pool, snapshot, previous.get(pool.key), pending, options.intervalMs, site.quota, (snapshot.startedLastMinute ?? 0) + startedNow);
    const base = {
      pool: pool.key,
      supply: state.supply,
      allocation: state.allocation,
      utilisation: state.utilisation,
      pendingJobs: pending.length,
    };
    if (!snapshot.batchHealthy) {
      // Nothing it says can be trusted: start nothing, stop nothing, keep the old demand.
      demand.set(pool.key, state.demand);
      reports.push({ ...base, demand: state.demand, reason: { rule: 'batch-system-unreachable' } });
      continue;
    }
    const planned = plan?.get(pool.key);
    const wanted = planned
      ? { demand: state.liveCores + (planned.newDrones - (planned.drain ?? 0)) * pool.cores, reason: planned.reason }
      : options.controllerFor(pool)(state);
    const limits = { minimum: minDrones(pool, site) * pool.cores, maximum: site.quota * pool.cores, granularity: options.granularity ?? 1 };
    const idle = idleReleases(pool, snapshot, site, state, decisions, planned?.release);
    // A drone idle past the idle time is one the work does not want: its cores leave the demand.
    const target = standardise(wanted.demand - idle * pool.cores, state.supply, limits);
    demand.set(pool.key, target);
    const reason: Reason = { ...wanted.reason, demand: Math.round(target * 1000) / 1000, liveCores: state.liveCores };
    reports.push({ ...base, demand: target, reason });
    const released = idle + shrink(pool, snapshot, site, state.liveCores - idle * pool.cores - target, reason, decisions);
    const liveCores = state.liveCores - released * pool.cores;
    if (target > liveCores) {
      if (!site.healthy) {
        reports[reports.length - 1] = { ...base, demand: target, reason: { ...reason, rule: 'site-unhealthy', wanted: wanted.reason.rule } };
        continue;
      }
      let missing = target - liveCores;
      const runMs = Math.max(0, ...pending.map((j) => j.timeLimitMs ?? 0)) || (options.runtimeMs ?? DEFAULT_RUNTIME_MS);
      const cost = planned?.droneBudget || droneBudget(site, pool.cores, pool.market, runMs);
      while (missing > 0 && (liveAtSite.get(pool.site) ?? 0) < site.quota) {
        const spent = reserved.get(pool.site) ?? 0;
        if (spent + cost > budgetLeft(site)) {
          // Budgets are hard: say so where the start would have been.
          reports[reports.length - 1] = { ...base, demand: target, reason: overBudget(site, cost, spent, reason) };
          break;
        }
        reserved.set(pool.site, spent + cost);
        decisions.push({
          kind: 'start',
          site: pool.site,
          machineType: pool.machineType,
          ...(pool.market ? { market: pool.market } : {}),
          reason,
          budget: cost,
          pricePerCoreHour: pricePerCoreHour(site, pool.market) ?? site.costPerCoreHour,
        });
        liveAtSite.set(pool.site, (liveAtSite.get(pool.site) ?? 0) + 1);
        startedNow++;
        missing -= pool.cores;
      }
      if (missing > 0 && (liveAtSite.get(pool.site) ?? 0) >= site.quota && reports[reports.length - 1]!.reason.rule !== 'budget')
        reports[reports.length - 1] = { ...base, demand: target, reason: quotaFull(site, liveAtSite.get(pool.site) ?? 0, reason) };
    } else if (wanted.demand - idle * pool.cores > limits.maximum && target >= limits.maximum)
      // Wanted more than the quota allows: say so rather than leave the controller's rule alone.
      reports[reports.length - 1] = { ...base, demand: target, reason: quotaFull(site, liveAtSite.get(pool.site) ?? 0, reason) };
  }
  const away = plan ? new Set([...plan.values()].flatMap((p) => p.awayFromHome ?? [])) : undefined;
  return { decisions, pools: reports, demand, prewarm, placed, ...(away?.size ? { awayFromHome: away } : {}) };
}

/** Demand the site's quota cannot meet: said as such, with the numbers the controller wanted. */
function quotaFull(site: Snapshot['sites'][number], used: number, wanted: Reason): Reason {
  return { ...wanted, rule: 'quota', wanted: wanted.rule, why: `${site.name}: quota ${used}/${site.quota} used: no more drones`, quotaUsed: used, quota: site.quota };
}

function overBudget(site: Snapshot['sites'][number], cost: number, reservedNow: number, wanted: Reason): Reason {
  const budget = costOf(site).budgetPerDay ?? 0;
  const spent = site.spentToday ?? 0;
  return {
    rule: 'budget',
    why: `${site.name}: $${spent.toFixed(2)} spent or held today + $${reservedNow.toFixed(2)} started now + $${cost.toFixed(2)} for one more drone would pass the budget of $${budget.toFixed(2)} a day: not started`,
    wanted: wanted.rule,
    spentToday: cents(spent),
    droneCost: cents(cost),
    budgetPerDay: budget,
  };
}

/** The site's `min` is kept on demand: a spot pool beside it would double it (and may be reclaimed). */
const minDrones = (pool: PoolView, site: Snapshot['sites'][number]) => (pool.market === 'spot' ? 0 : site.min);

const oldEnough = (d: Drone, now: number, minLifetime: number) => now - d.createdAt >= minLifetime;

/**
 * Drones idle past the site's idle time, or sooner where estuary's plan lets them go
 * (idle-release.ts), never below the pool's minimum; returns the count.
 */
function idleReleases(
  pool: PoolView,
  snapshot: Snapshot,
  site: Snapshot['sites'][number],
  state: PoolState,
  out: Decision[],
  early: readonly IdleRelease[] = [],
): number {
  const now = snapshot.now;
  const soon = new Map(early.map((e) => [e.droneId, e]));
  let live = state.liveCores / pool.cores;
  let n = 0;
  for (const d of pool.drones.filter(isAvailable)) {
    const idleFor = now - d.drone.lastBusyAt;
    const planned = soon.get(d.drone.id);
    if (live <= minDrones(pool, site)) break;
    if (d.node.allocCpus !== 0 || (idleFor < site.idleTime && !planned) || !oldEnough(d.drone, now, site.minLifetime)) continue;
    live--;
    n++;
    const reason: Reason =
      idleFor < site.idleTime && planned
        ? { rule: 'idle-boot', why: `idle ${planned.idleS} s, as long as a new drone takes to boot (${planned.bootS} s), and no pending job is placed on it`, idleS: planned.idleS, bootS: planned.bootS }
        : { rule: 'idle-time', idleS: Math.round(idleFor / 1000), limitS: site.idleTime / 1000 };
    out.push({ kind: 'release', droneId: d.drone.id, reason });
  }
  return n;
}

/** COBalD FactoryPool._shrink: least supply·utilisation first, each only if its demand fits. */
function shrink(
  pool: PoolView,
  snapshot: Snapshot,
  site: Snapshot['sites'][number],
  excess: number,
  reason: Reason,
  out: Decision[],
): number {
  const taken = new Set(out.flatMap((d) => (d.kind === 'release' ? [d.droneId] : [])));
  const candidates = pool.drones
    .filter(isAvailable)
    .filter((d) => !taken.has(d.drone.id) && oldEnough(d.drone, snapshot.now, site.minLifetime))
    .sort((a, b) => usage(a).util - usage(b).util || a.drone.createdAt - b.drone.createdAt);
  let n = 0;
  for (const d of candidates) {
    if (excess < pool.cores) break;
    excess -= pool.cores;
    n++;
    out.push({ kind: 'release', droneId: d.drone.id, reason: { ...reason, rule: `${reason.rule}:shrink` } });
  }
  return n;
}
