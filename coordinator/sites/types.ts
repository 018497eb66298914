// The site adapter: one interface for every place drones run (network namespaces here, admin
// scripts, clouds). After TARDIS's SiteAdapter: deploy, status, stop. Every method is keyed by
// the drone id, which each adapter also uses as the instance's name or tag, so a coordinator
// restarted after a crash can find an instance it asked for even if it never heard the answer.

import type { InstanceStatus, Market } from '../model.ts';

export interface DroneSpec {
  readonly id: string;
  readonly site: string;
  readonly machineType: string;
  readonly cores: number;
  readonly memoryMb: number;
  /** Node features the drone's worker must announce (site_<s>, type_<t>, ...). */
  readonly features: readonly string[];
  /** Set when the policy chose the market; absent: the site's own setting (ec2 `spot`). */
  readonly market?: Market;
}

/** Adapter data kept in the registry with the drone (addresses, pids, cloud ids). */
export type InstanceData = Readonly<Record<string, string | number>>;

export interface SiteAdapter {
  readonly name: string;
  /** Starts the instance. Idempotent: a second call for a running id returns its data. */
  deploy(spec: DroneSpec): Promise<InstanceData>;
  /** What the site says of the instance; 'deleted' when it has none of that id. */
  status(id: string, data: InstanceData): Promise<Exclude<InstanceStatus, 'unknown'>>;
  /** Stops and deletes the instance and everything it holds. Idempotent. */
  stop(id: string, data: InstanceData): Promise<void>;
  /** Ids of every instance at the site that belongs to this coordinator (name prefix). */
  list(prefix: string): Promise<string[]>;
  /** Releases what the adapter holds itself (never the instances). */
  close?(): Promise<void>;
}
