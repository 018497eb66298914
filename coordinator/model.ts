// The coordinator's data model: drones, jobs, pools and the snapshot the policy decides on.
// Plain readonly data, so a snapshot can be logged, served by the API and replayed in a test.

/** TARDIS's lifecycle, as one word per state (docs/COORDINATOR.md has the diagram). */
export const DRONE_STATES = [
  'requested', // persisted, the site has been (or is about to be) asked for an instance
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

export const LIVE_STATES: readonly DroneState[] = ['requested', 'booting', 'integrating', 'available', 'draining'];

/** Why something was decided: a rule name and the numbers that decided it. */
export interface Reason {
  readonly rule: string;
  readonly [field: string]: string | number | boolean | undefined;
}

export interface Drone {
  /** Also the instance name at the site and the node name in the batch system. */
  readonly id: string;
  readonly site: string;
  readonly machineType: string;
  readonly state: DroneState;
  readonly createdAt: number;
  readonly stateSince: number;
  /** When the node last ran a job (or became available): the start of its idle time. */
  readonly lastBusyAt: number;
  /** Adapter data a restart needs (address, pid, cloud instance id), opaque to the core. */
  readonly instance: Readonly<Record<string, string | number>>;
  readonly reason: Reason;
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
  readonly submittedAt: number;
  readonly reason: string;
}

/** One pool: a site × machine type, the unit a controller regulates (COBalD's Pool). */
export interface PoolView {
  readonly key: string;
  readonly site: string;
  readonly machineType: string;
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
  readonly costPerCoreHour: number;
}

/** Everything the policy may look at, frozen at one instant. */
export interface Snapshot {
  readonly now: number;
  readonly batchHealthy: boolean;
  readonly pending: readonly PendingJob[];
  readonly sites: readonly SiteView[];
  readonly pools: readonly PoolView[];
}

export function poolKey(site: string, machineType: string): string {
  return `${site}/${machineType}`;
}

/** Node features every drone carries, so jobs can be steered to a site or machine type. */
export function droneFeatures(site: string, machineType: string, extra: readonly string[]): string[] {
  return ['estuary', `site_${site}`, `type_${machineType}`, ...extra];
}
