// The state estuary's policy plans on (estuary-policy.ts): each site's room, budget and links as
// the plan uses them up, each pool's slots, the home cluster as one more pool, and where a job's
// inputs are and what moving them costs. Pure: the snapshot is all it reads.

import type { EstuaryConfig } from './config.ts';
import { costOf, dollars, linkTo, locationOf } from './cost.ts';
import type { IdleDrone } from './idle-release.ts';
import type { PendingJob, PoolView, SiteView, Snapshot } from './model.ts';
import type { RunEstimate } from './run-times.ts';
import type { PlannedRun } from './spot-tail.ts';
import { PoolSlots } from './slots.ts';
import { HOME_POOL } from './steer.ts';
import { busyTimes } from './busy-cores.ts';

export const WAITING = new Set(['requested', 'unknown', 'booting', 'integrating']);

export interface SiteState {
  readonly site: SiteView;
  room: number;
  budget: number;
  /** When each input being fetched (or held) will be at the site, ms from now. */
  readonly ready: Map<string, number>;
  /** When each storage link of the site is free again. */
  readonly linkBusy: Map<string, number>;
}

export interface PoolState {
  readonly pool: PoolView;
  readonly slots: PoolSlots;
  readonly jobs: PendingJob[];
  newDrones: number;
  reserved: number;
  readonly prewarm: Set<string>;
  /** A new drone was wanted here but the daily budget held it back. */
  budgetHeld: boolean;
  /** Jobs that could run nowhere, by why this pool refused them. */
  readonly unplaced: Map<string, number>;
  /** How every pool looked for the first job placed here: the alternatives in the reason. */
  first?: { evals: readonly Evaluation[]; turnaround: number; runMs: number; estimate: RunEstimate };
  computeCost: number;
  inputCost: number;
  outputCost: number;
  wanCost: number;
  wanBytes: number;
  readonly away: string[];
  finish: number;
  /** Slots of the pool's idle drones (idle-release.ts), and the slots the plan gave a job. */
  readonly idle: IdleDrone[];
  readonly used: Set<number>;
  /** The placed jobs' starts and finishes (spot-tail.ts). */
  readonly runs: PlannedRun[];
}

export interface Data {
  bytes: number;
  cached: number;
  egress: number;
  /** Bytes that cross a WAN link to reach the site, and their `wan-per-gb` price. */
  wanBytes: number;
  wan: number;
  readyMs: number;
  fetch: { url: string; at: number; link: string }[];
}

export interface Evaluation {
  readonly pool: PoolState;
  /** Why it cannot take the job at all. */
  readonly refused?: 'unhealthy' | 'full' | 'over budget';
  readonly idx?: number;
  readonly opens?: boolean;
  readonly finish?: number;
  readonly cost?: number;
  readonly compute?: number;
  readonly data?: Data;
  readonly output?: number;
}

/** When the plan expects busy cores to free: per node from their jobs' starts (busy-cores.ts), else `unknownMs`. */
export interface Busy {
  readonly unknownMs: number;
  readonly known: ReadonlyMap<string, readonly number[]>;
}

/**
 * When a busy core whose job's start is unknown is expected to be free: a job in progress is
 * halfway through on average, so half the median time limit (else `runtime`) of the waiting
 * jobs, work of the same kind as a rule. Not half the learned run time: jobs started together
 * free their cores together; with it, kek-figure8's waiting work queued for cores that freed
 * later than that (makespan 6,995 s against 6,363 s).
 */
export function busyFor(snapshot: Snapshot, c: EstuaryConfig): number {
  const runs = snapshot.pending.map((j) => j.timeLimitMs ?? c.runtime).sort((a, b) => a - b);
  return runs.length ? runs[Math.floor(runs.length / 2)]! / 2 : c.runtime / 2;
}

export function poolState(pool: PoolView, snapshot: Snapshot, site: SiteView, busyMs: Busy): PoolState {
  const slots = new PoolSlots();
  const idleDrones: IdleDrone[] = [];
  const boot = costOf(site).bootLatencyMs;
  // A site whose API failed but whose drones' nodes run is reachable where it matters (its nodes
  // take jobs): its drones still booting count. One with no running node may be truly down.
  const booting = site.healthy || pool.drones.some((d) => d.drone.state === 'available' && d.node.status === 'available');
  for (const d of pool.drones) {
    if (d.drone.state === 'available' && d.node.status === 'available') {
      const idle = Math.max(0, d.node.cpus - d.node.allocCpus);
      const busy = Math.max(0, Math.min(d.node.cpus, d.node.allocCpus));
      const idx = slots.add([...Array.from({ length: idle }, () => 0), ...busyTimes(busyMs.known.get(d.drone.id), busy, busyMs.unknownMs)]);
      if (busy === 0) idleDrones.push({ id: d.drone.id, idx, idleForMs: snapshot.now - d.drone.lastBusyAt, ageMs: snapshot.now - d.drone.createdAt });
    } else if (WAITING.has(d.drone.state) && booting) {
      const at = Math.max(0, boot - (snapshot.now - d.drone.createdAt));
      slots.add(Array.from({ length: pool.cores }, () => at));
    }
  }
  return newPool(pool, slots, idleDrones);
}

export const newPool = (pool: PoolView, slots: PoolSlots, idle: IdleDrone[] = []): PoolState => ({
  pool,
  slots,
  jobs: [],
  newDrones: 0,
  reserved: 0,
  prewarm: new Set(),
  budgetHeld: false,
  unplaced: new Map(),
  computeCost: 0,
  inputCost: 0,
  outputCost: 0,
  wanCost: 0,
  wanBytes: 0,
  away: [],
  finish: 0,
  idle,
  used: new Set(),
  runs: [],
});

/** The home cluster as the plan's site: the name its cache's holdings are reported under. */
export const HOME = 'home';

/**
 * The home cluster as one more pool: its nodes in groups of the largest node's cores, idle cores
 * free now, busy ones free like a drone's busy core. Free of charge, never opened, never full by
 * quota; its link to data is the default one. Absent when the batch system does not report it.
 */
export function homeState(snapshot: Snapshot, busyMs: Busy): { site: SiteState; pool: PoolState } | undefined {
  const h = snapshot.home;
  if (!h || h.cores <= 0 || h.nodeCores <= 0) return undefined;
  // The home nodes' known busy cores, soonest first: the plan groups home cores, not nodes.
  const drones = new Set(snapshot.pools.flatMap((p) => p.drones.map((d) => d.drone.id)));
  const known = [...busyMs.known].filter(([node]) => !drones.has(node)).flatMap(([, t]) => t).sort((a, b) => a - b);
  const site: SiteView = { name: HOME, quota: 0, min: 0, healthy: true, idleTime: 0, minLifetime: 0, bootTimeout: 0, costPerCoreHour: 0 };
  const pool: PoolView = { key: HOME_POOL, site: HOME, machineType: HOME, cores: h.nodeCores, memoryMb: h.nodeMemoryMb, features: h.feature ? [h.feature] : [], drones: [] };
  const slots = new PoolSlots();
  let idle = Math.max(0, Math.min(h.idleCores, h.cores));
  for (let left = h.cores; left > 0; left -= h.nodeCores) {
    const n = Math.min(h.nodeCores, left);
    const free = Math.min(idle, n);
    idle -= free;
    slots.add([...Array.from({ length: free }, () => 0), ...busyTimes(known.splice(0, n - free), n - free, busyMs.unknownMs)]);
  }
  return { site: { site, room: 0, budget: Infinity, ready: new Map(), linkBusy: new Map() }, pool: newPool(pool, slots) };
}

/** Every declared input of the job is held in full at home (or sits there). */
export function heldAtHome(job: PendingJob, snapshot: Snapshot): boolean {
  const held = snapshot.holdings?.get(HOME);
  return job.inputs.every((i) => {
    const size = i.bytes ?? snapshot.sizes?.get(i.url);
    const has = held?.get(i.url) ?? 0;
    return size === undefined ? has > 0 : has >= size;
  });
}

/** Bytes of the job's inputs, what the site holds, what fetching the rest costs and when it is there. */
export function dataAt(job: PendingJob, s: SiteState, snapshot: Snapshot, wanPerGb: number): Data {
  const held = snapshot.holdings?.get(s.site.name);
  const out: Data = { bytes: 0, cached: 0, egress: 0, wanBytes: 0, wan: 0, readyMs: 0, fetch: [] };
  const busy = new Map(s.linkBusy);
  for (const input of job.inputs) {
    const size = input.bytes ?? snapshot.sizes?.get(input.url);
    const has = held?.get(input.url) ?? 0;
    if (size === undefined) {
      out.cached += has;
      continue;
    }
    out.bytes += size;
    out.cached += Math.min(has, size);
    const ready = s.ready.get(input.url);
    if (ready !== undefined) {
      out.readyMs = Math.max(out.readyMs, ready);
      continue;
    }
    const missing = Math.max(0, size - has);
    const link = linkTo(s.site, input.url, snapshot.storage);
    const name = locationOf(input.url, snapshot.storage)?.name ?? '';
    // One link per storage location, used one transfer after another.
    const at = (busy.get(name) ?? 0) + (missing > 0 ? link.rttMs + ((missing * 8) / link.bandwidthBps) * 1000 : 0);
    busy.set(name, at);
    out.egress += dollars(missing, link.egressPerGb);
    out.wanBytes += missing;
    out.wan += dollars(missing, wanPerGb);
    out.readyMs = Math.max(out.readyMs, at);
    out.fetch.push({ url: input.url, at, link: name });
  }
  return out;
}

