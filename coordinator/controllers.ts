// Controllers: each turns one pool's numbers into the demand (in cores) it wants next, with the
// reason as data. They are faithful to the tools they are named after, defaults included, because
// the placement work compares estuary's own policy against them (docs/COORDINATOR.md gives the
// formulas and the sources). Pure: every input, time included, arrives in PoolState.

import { CONTROLLER_DEFAULTS, type ControllerConfig } from './config.ts';
import type { PendingJob, Reason } from './model.ts';

/** One pool as a controller sees it. Cores throughout, as TARDIS counts a drone's demand. */
export interface PoolState {
  readonly now: number;
  readonly intervalMs: number;
  /** Demand set by the previous interval (COBalD keeps it on the pool). */
  readonly demand: number;
  /** Cores of drones that take jobs (TARDIS: a drone has supply only while available). */
  readonly supply: number;
  /** Mean over available drones of max(allocated/total) over CPU and memory; 1 with none. */
  readonly allocation: number;
  /** Mean over available drones of min(allocated/total) over CPU and memory; 1 with none. */
  readonly utilisation: number;
  readonly cores: number;
  /** Most drones this pool may have (the site quota): GlideinWMS's per-entry max_running. */
  readonly maxDrones: number;
  /** Cores of every live drone (requested to draining, draining excluded). */
  readonly liveCores: number;
  /** Cores of drones not yet taking jobs (requested, booting, integrating). */
  readonly waitingCores: number;
  /** Cores of available drones with no job at all. */
  readonly idleCores: number;
  /** Available drones running at least one job. */
  readonly busyDrones: number;
  readonly idleDrones: number;
  readonly waitingDrones: number;
  /** Pending jobs placed on this pool. */
  readonly pending: readonly PendingJob[];
  /**
   * Drones requested in the last minute at every site, this interval's earlier starts included
   * (Slurm's ResumeRate counts the nodes resumed across the whole cluster).
   */
  readonly startedLastMinute: number;
}

export interface ControllerResult {
  readonly demand: number;
  readonly reason: Reason;
}

export type Controller = (pool: PoolState) => ControllerResult;

const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** COBalD LinearController: demand moves by rate·interval when badly used or well allocated. */
export function linear(c: Extract<ControllerConfig, { type: 'linear' }>): Controller {
  return (p) => {
    const step = (p.intervalMs / 1000) * c.rate;
    const base = { utilisation: r3(p.utilisation), allocation: r3(p.allocation), step: r3(step) };
    if (p.utilisation < c.lowUtilisation)
      return { demand: p.demand - step, reason: { rule: 'linear-low-utilisation', ...base, low: c.lowUtilisation } };
    if (p.allocation > c.highAllocation)
      return { demand: p.demand + step, reason: { rule: 'linear-high-allocation', ...base, high: c.highAllocation } };
    return { demand: p.demand, reason: { rule: 'linear-steady', ...base } };
  };
}

/** COBalD RelativeSupplyController: demand is supply scaled down, up, or kept. */
export function relative(c: Extract<ControllerConfig, { type: 'relative' }>): Controller {
  return (p) => {
    const base = { utilisation: r3(p.utilisation), allocation: r3(p.allocation), supply: p.supply };
    if (p.utilisation < c.lowUtilisation)
      return { demand: p.supply * c.lowScale, reason: { rule: 'relative-low-utilisation', ...base, scale: c.lowScale } };
    if (p.allocation > c.highAllocation)
      return { demand: p.supply * c.highScale, reason: { rule: 'relative-high-allocation', ...base, scale: c.highScale } };
    return { demand: p.supply, reason: { rule: 'relative-steady', ...base } };
  };
}

/**
 * LSF Resource Connector's THRESHOLD demand policy: demand is raised when at least `jobs` jobs
 * have been pending for `pendingFor`, for any rule. Raised demand covers every pending job's
 * cores not already covered by drones still booting or idle; otherwise the pool keeps what it
 * has and idle drones go by the idle time, as RC releases hosts.
 */
export function threshold(c: Extract<ControllerConfig, { type: 'threshold' }>): Controller {
  return (p) => {
    const hit = c.rules.find(
      (rule) => p.pending.filter((j) => p.now - j.submittedAt >= rule.pendingFor).length >= rule.jobs,
    );
    const pendingCores = p.pending.reduce((s, j) => s + j.cpus, 0);
    if (!hit)
      return {
        demand: p.liveCores,
        reason: { rule: 'threshold-not-met', pendingJobs: p.pending.length, rules: c.rules.length },
      };
    const uncovered = Math.max(0, pendingCores - p.waitingCores - p.idleCores);
    return {
      demand: p.liveCores + uncovered,
      reason: {
        rule: 'threshold-met',
        pendingJobs: p.pending.length,
        pendingCores,
        coveredCores: pendingCores - uncovered,
        jobs: hit.jobs,
        pendingForS: hit.pendingFor / 1000,
      },
    };
  };
}

/**
 * Slurm power saving (ResumeProgram/SuspendProgram, as AWS ParallelCluster and slurm-gcp set it
 * up): the scheduler allocates pending jobs to powered-down cloud nodes as to any idle node, and
 * every node it allocated is resumed. With select/cons_tres and CR_CPU (ParallelCluster's
 * SelectTypeParameters) single-core jobs share a node, so the nodes resumed are the pending
 * cores not covered by nodes already resuming or idle, in whole nodes, at most ResumeRate nodes
 * in any minute across every pool (0: no limit): the nodes resumed in the last 60 s use it up,
 * whatever the interval. Nodes are suspended after SuspendTime idle (the site's idle time) and
 * marked down when they miss ResumeTimeout (the site's boot timeout); demand never shrinks
 * otherwise, as Slurm powers down only idle nodes.
 */
export function slurmPower(c: Extract<ControllerConfig, { type: 'slurm-power' }>): Controller {
  return (p) => {
    const pendingCores = p.pending.reduce((s, j) => s + j.cpus, 0);
    const uncovered = Math.max(0, pendingCores - p.waitingCores - p.idleCores);
    let nodes = Math.ceil(uncovered / p.cores);
    const allowed = c.resumeRate > 0 ? Math.max(0, c.resumeRate - p.startedLastMinute) : Infinity;
    nodes = Math.min(nodes, allowed);
    return {
      demand: p.liveCores + nodes * p.cores,
      reason: {
        rule: 'slurm-resume',
        pendingJobs: p.pending.length,
        pendingCores,
        coveredCores: pendingCores - uncovered,
        resume: nodes,
        resumeRate: c.resumeRate,
        resumedLastMinute: p.startedLastMinute,
      },
    };
  };
}

/**
 * GlideinWMS frontend: glidein_max_run and glidein_min_idle of one entry, counted in drones
 * (a drone is a glidein). The factory keeps min_idle drones waiting at the site and never more
 * than max_run in all; drones leave by their idle time, as glideins do.
 */
export function glideinwms(c: Extract<ControllerConfig, { type: 'glideinwms' }>): Controller {
  return (p) => {
    const perDrone = (jobs: readonly PendingJob[]) =>
      Math.ceil(jobs.reduce((s, j) => s + j.cpus, 0) / p.cores);
    const idleJobs = perDrone(p.pending);
    const oldIdleJobs = perDrone(p.pending.filter((j) => p.now - j.submittedAt >= c.oldIdleAfter));
    const total = p.busyDrones + p.idleDrones + p.waitingDrones;
    const real = p.busyDrones;
    const maxRun =
      idleJobs + real > 0
        ? idleJobs > 0
          ? Math.floor((Math.max(idleJobs - p.idleDrones, 0) + real) * c.relativeToQueue + 1)
          : real
        : 0;
    const effectiveIdle = Math.max(idleJobs - p.idleDrones, 0);
    const effectiveOldIdle = Math.max(oldIdleJobs - p.idleDrones, 0);
    let minIdle = 0;
    if (total >= p.maxDrones || p.idleDrones >= c.maxVmsIdle) minIdle = 0;
    else if (effectiveIdle > 0) {
      minIdle = Math.floor(Math.min(effectiveIdle, p.maxDrones - total) / c.rampUpAttenuation);
      minIdle += Math.min(Math.floor(effectiveOldIdle / 3), c.reserveIdle);
      minIdle = Math.min(minIdle, c.maxIdle);
      if (p.idleDrones >= c.curbIdle) minIdle /= 2;
      if (minIdle < 1) minIdle = 1;
      minIdle = Math.floor(minIdle);
    }
    const request = Math.max(0, minIdle - p.waitingDrones);
    const drones = request > 0 ? Math.min(maxRun, total + request) : total;
    return {
      demand: drones * p.cores,
      reason: { rule: 'glideinwms', idleJobs, effectiveIdle, effectiveOldIdle, maxRun, minIdle, waiting: p.waitingDrones },
    };
  };
}

export function makeController(c: ControllerConfig): Controller {
  switch (c.type) {
    case 'linear':
      return linear(c);
    case 'relative':
      return relative(c);
    case 'threshold':
      return threshold(c);
    case 'glideinwms':
      return glideinwms(c);
    case 'slurm-power':
      return slurmPower(c);
    case 'estuary':
      // estuary's policy plans every pool's demand itself (coordinator/estuary-policy.ts); a
      // controller is asked only for a pool the plan does not cover, and then reacts like LSF RC.
      return threshold({ type: 'threshold', rules: CONTROLLER_DEFAULTS.threshold.rules.map((r) => ({ ...r })) });
  }
}

export interface StandardiserLimits {
  readonly minimum: number;
  readonly maximum: number;
  readonly granularity: number;
  readonly surplus?: number;
  readonly backlog?: number;
}

/**
 * COBalD's Standardiser: supply−backlog ≤ demand ≤ supply+surplus, floored to the granularity,
 * with minimum and maximum overruling everything else.
 */
export function standardise(value: number, supply: number, l: StandardiserLimits): number {
  const clamp = (lo: number, v: number, hi: number) => (v < lo ? lo : v > hi ? hi : v);
  const bounded = (v: number) =>
    clamp(l.minimum, clamp(supply - (l.backlog ?? Infinity), v, supply + (l.surplus ?? Infinity)), l.maximum);
  return l.granularity === 1 ? bounded(value) : bounded(Math.floor(value / l.granularity) * l.granularity);
}
