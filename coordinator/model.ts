// The coordinator's data model: drones, jobs, pools and the snapshot the policy decides on.
// Plain readonly data, so a snapshot can be logged, served by the API and replayed in a test.

import type { RunTimes } from './run-times.ts';

/** TARDIS's lifecycle, as one word per state (docs/COORDINATOR.md has the diagram). */
export const DRONE_STATES = [
  'requested', // persisted, the site has been (or is about to be) asked for an instance
  'unknown', // the site's answer to the deploy never came (timeout): it may exist; asked by id each interval
  'booting', // the site accepted; the instance is starting
  'integrating', // the instance runs; waiting for its node to join the batch system
  'available', // the node takes jobs
  'draining', // no new jobs; running jobs finish
  'stopping', // node removed from the batch system; the instance is being stopped
  'down', // gone at the site and in the batch system: final
  'error', // failed (boot timeout, site error); being cleaned up like stopping
  'lost', // vanished under us (instance died, node down with jobs); being cleaned up
] as const;
export type DroneState = (typeof DRONE_STATES)[number];

export const LIVE_STATES: readonly DroneState[] = ['requested', 'unknown', 'booting', 'integrating', 'available', 'draining'];

/** Why something was decided: a rule name and the numbers that decided it. */
export interface Reason {
  readonly rule: string;
  readonly [field: string]: string | number | boolean | undefined;
}

/** How a drone is bought: on demand (the default) or on the spot market, cheaper and reclaimable. */
export type Market = 'on-demand' | 'spot';

export interface Drone {
  /** Also the instance name at the site and the node name in the batch system. */
  readonly id: string;
  readonly site: string;
  readonly machineType: string;
  /** Absent in drones written before markets existed: on demand. */
  readonly market?: Market;
  readonly state: DroneState;
  readonly createdAt: number;
  readonly stateSince: number;
  /** When the node last ran a job (or became available): the start of its idle time. */
  readonly lastBusyAt: number;
  /** Adapter data a restart needs (address, pid, cloud instance id), opaque to the core. */
  readonly instance: Readonly<Record<string, string | number>>;
  readonly reason: Reason;
  /** Why the drone was started; kept through its transitions (absent in older registries). */
  readonly startReason?: Reason;
  /** Its price per core-hour when started; its whole life is priced so (absent: the site's). */
  readonly pricePerCoreHour?: number;
  /** Dollars it was budgeted at when started: held against the site's budget until it ends. */
  readonly budget?: number;
}

/**
 * What a site says about one instance (TARDIS's ResourceStatus, plus "unknown" on API failure).
 * "interrupting": still running, but the site has announced it takes the instance back soon (an
 * EC2 spot interruption notice, a preemption warning): the drone drains while it still can.
 */
export type InstanceStatus = 'booting' | 'running' | 'interrupting' | 'stopped' | 'deleted' | 'error' | 'unknown';

/** What the batch system says about one drone's node (TARDIS's MachineStatus, finer). */
export type NodeStatus = 'absent' | 'available' | 'draining' | 'drained' | 'down' | 'unknown';

export interface NodeView {
  readonly status: NodeStatus;
  readonly cpus: number;
  readonly allocCpus: number;
  readonly memoryMb: number;
  readonly allocMemoryMb: number;
}

/** A job waiting for resources, as the batch system adapter reads it. */
export interface PendingJob {
  readonly id: string;
  readonly partition: string;
  readonly cpus: number;
  readonly memoryMb: number;
  /** Features the job requires: every group must be matched by at least one of its alternatives. */
  readonly constraints: readonly (readonly string[])[];
  /** Declared inputs (s3://, cvmfs://, http(s)://), with sizes when given. */
  readonly inputs: readonly { readonly url: string; readonly bytes?: number }[];
  /** Bytes of results the job sends home (`estuary-outputs=SIZE` in its comment), when declared. */
  readonly outputBytes?: number;
  /** The job's time limit (Slurm --time), when it has one: the run time expected when none is learned. */
  readonly timeLimitMs?: number;
  /** Who submitted it and its name: the keys of the run times learned from finished jobs (run-times.ts). */
  readonly user?: string;
  readonly name?: string;
  readonly submittedAt: number;
  readonly reason: string;
  /** The site this coordinator steered the job to (coordinator/steer.ts), read back from its features. */
  readonly steeredTo?: string;
}

/** One pool: a site × machine type, the unit a controller regulates (COBalD's Pool). */
export interface PoolView {
  readonly key: string;
  readonly site: string;
  readonly machineType: string;
  /** Absent: on demand. Spot pools exist only where the site has a spot price and the policy buys spot. */
  readonly market?: Market;
  readonly cores: number;
  readonly memoryMb: number;
  readonly features: readonly string[];
  readonly drones: readonly DroneView[];
}

export interface DroneView {
  readonly drone: Drone;
  readonly node: NodeView;
}

export interface SiteView {
  readonly name: string;
  readonly quota: number;
  readonly min: number;
  readonly healthy: boolean;
  readonly idleTime: number;
  readonly minLifetime: number;
  readonly bootTimeout: number;
  /** On-demand dollars per core-hour. */
  readonly costPerCoreHour: number;
  /** The rest of the site's cost model; absent means the defaults (config.ts COST_DEFAULTS). */
  readonly cost?: SiteCost;
  /** Dollars the site's drones have cost since 00:00 UTC (filled in by the coordinator). */
  readonly spentToday?: number;
}

/** How a site reaches one storage location. */
export interface Link {
  /** Dollars per GB from the storage location to the site. */
  readonly egressPerGb: number;
  readonly bandwidthBps: number;
  readonly rttMs: number;
}

/** A site's prices and links, as the policy weighs them (docs/COORDINATOR.md, "The cost model"). */
export interface SiteCost {
  /** Dollars per core-hour on the spot market; no spot market when absent. */
  readonly spotPerCoreHour?: number;
  /** Expected spot reclaims per instance-hour. */
  readonly spotInterruptionRate: number;
  /** Dollars per GB leaving the site (results home). */
  readonly egressPerGb: number;
  /** Link to any storage location not in `links`. */
  readonly link: Link;
  /** By storage location name. */
  readonly links: Readonly<Record<string, Link>>;
  readonly bootLatencyMs: number;
  /** Dollars per UTC day; unlimited when absent. */
  readonly budgetPerDay?: number;
}

/** Where inputs live: URLs starting with one of `urls` are in this location. */
export interface StorageLocation {
  readonly name: string;
  readonly urls: readonly string[];
  /** Dollars per GB out of the location, for sites without a link price of their own. */
  readonly egressPerGb: number;
}

/** Everything the policy may look at, frozen at one instant. */
export interface Snapshot {
  readonly now: number;
  readonly batchHealthy: boolean;
  readonly pending: readonly PendingJob[];
  readonly sites: readonly SiteView[];
  readonly pools: readonly PoolView[];
  readonly storage?: readonly StorageLocation[];
  /** Per site: bytes its caches hold of each declared input (coordinator/data.ts). */
  readonly holdings?: ReadonlyMap<string, ReadonlyMap<string, number>>;
  /** Sizes of declared inputs whose jobs gave none, as looked up (bytes). */
  readonly sizes?: ReadonlyMap<string, number>;
  /** Run times learned from finished jobs (run-times.ts); none learned when absent. */
  readonly runTimes?: RunTimes;
  /** The home cluster's cores, when the batch system says (holdings of its cache under "home"). */
  readonly home?: { readonly cores: number; readonly idleCores: number; readonly nodeCores: number; readonly nodeMemoryMb: number; readonly feature?: string };
  /** Drones requested in the last minute at every site, down ones included (slurm-power's rate). */
  readonly startedLastMinute?: number;
  /** Running jobs of the served partitions and where they run, when the batch system says. */
  readonly running?: readonly RunningJob[];
}

/** A running job on one node: when it started (batch system's word, hostile) and what it is. */
export interface RunningJob {
  /** The node's name: a drone's id, or a home node's. */
  readonly node: string;
  readonly cpus: number;
  readonly partition: string;
  readonly user?: string;
  readonly name?: string;
  readonly timeLimitMs?: number;
  /** ms since the epoch; absent when the batch system gave none usable. */
  readonly startedAt?: number;
  /** It has ended and its node runs the epilog (Slurm's COMPLETING): its cores free in seconds. */
  readonly completing?: boolean;
}

/** `site/type` for on-demand pools (as before markets), `site/type/spot` for spot ones. */
export function poolKey(site: string, machineType: string, market?: Market): string {
  return market === 'spot' ? `${site}/${machineType}/spot` : `${site}/${machineType}`;
}

/** Node features every drone carries, so jobs can be steered to a site or machine type. */
export function droneFeatures(site: string, machineType: string, extra: readonly string[]): string[] {
  return ['estuary', `site_${site}`, `type_${machineType}`, ...extra];
}
