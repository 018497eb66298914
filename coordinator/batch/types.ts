// The batch-system adapter: the one interface through which the coordinator reads demand and
// moves drones' nodes. Shaped after TARDIS's BatchSystemAdapter so that HTCondor fits as well as
// Slurm (docs/COORDINATOR.md maps each method onto condor_q / condor_status / condor_drain).

import type { NodeView, PendingJob, RunningJob } from '../model.ts';
import type { FinishedJob } from '../run-times.ts';

export interface Queue {
  /** Jobs waiting for resources in the partitions (queues) the coordinator serves. */
  readonly pending: PendingJob[];
  /** Running jobs of those partitions on the site's own nodes, and on drones (name prefix). */
  readonly runningAtHome: number;
  readonly runningOnDrones: number;
  /** Each running job on a single node, with its start time (estuary's policy: when cores free). */
  readonly running?: RunningJob[];
  /** The site's own nodes in those partitions, when the adapter reads them: estuary's policy places work there too. */
  readonly home?: HomeView;
  /** Pending jobs held back by a limit no drone can raise (not demand), with Slurm's reason. */
  readonly limited?: LimitedJob[];
  /** Array records whose task list the batch system printed cut short ("..."): counted as listed. */
  readonly truncatedArrays?: number;
}

export interface FinishedRead {
  readonly jobs: readonly FinishedJob[];
  /** Where the history comes from, in words ("Slurm accounting (sacct)"). */
  readonly source: string;
  /** Records that could not be read (hostile or broken lines), skipped. */
  readonly skipped: number;
  /**
   * Jobs an earlier read gave that a record read now disqualifies (the completion log, followed:
   * a second record of the job id, a second uid of the user): what was learned from them is taken
   * back, as a read of the whole source would never have given them.
   */
  readonly takenBack?: readonly { readonly id: string; readonly user: string }[];
}

export interface LimitedJob {
  readonly id: string;
  readonly reason: string;
}

/** The home cluster's cores: all of them, the free ones, and the largest node's. */
export interface HomeView {
  readonly cores: number;
  readonly idleCores: number;
  readonly nodeCores: number;
  readonly nodeMemoryMb: number;
}

export interface BatchSystem {
  readonly kind: string;
  /** The served partitions' queue; `prefix` tells drones' nodes from the site's own. */
  queue(prefix: string): Promise<Queue>;
  /** Every node the batch system knows whose name starts with `prefix`, by name. */
  nodes(prefix: string): Promise<Map<string, NodeView>>;
  /**
   * Features every one of the site's own nodes carries (as the last nodes() read found them):
   * steering adds one as an alternative, so a steered job may still run at home.
   */
  homeFeatures?(): readonly string[];
  /**
   * The home cluster's cores as the last nodes() read found them, for an adapter whose queue()
   * does not report them (Slurm reads them from sinfo, not squeue).
   */
  homeCores?(): HomeView | undefined;
  /**
   * Jobs of the served partitions that finished since `sinceMs` (epoch ms; up to `untilMs`, else
   * now), from the batch system's accounting, and where they came from. A source read as a file
   * from where the last read stopped (Slurm's completion log) gives the jobs written since, whatever
   * the window. Throws, saying why, when it keeps none; an error with `timedOut: true` when the
   * batch system gave no answer in time.
   */
  finished?(sinceMs: number, untilMs?: number): Promise<FinishedRead>;
  /**
   * The batch system's clock, in which finished() takes `sinceMs` (Slurm: the wall clock, which
   * a step of NTP moves while the coordinator's own clock does not). Absent: the coordinator's.
   */
  accountingTime?(): number;
  /** Whether any node, FUTURE ones included, carries `feature` (as the last nodes() read found). */
  declares?(feature: string): boolean;
  /** The node of a drone has joined: make it schedulable at once, and tag it with the drone. */
  integrate(node: string, tag: string): Promise<void>;
  /**
   * Require these node features of pending jobs (Slurm's --constraint syntax: `a|b`, `a&b`), so
   * the scheduler runs them only where the policy placed them; `''` lifts the requirement. Jobs
   * that have started or left meanwhile are skipped, not an error.
   */
  steer(jobIds: readonly string[], features: string): Promise<void>;
  /** No new jobs on the node; running ones finish. Idempotent. */
  drain(node: string, reason: string): Promise<void>;
  /**
   * Forget the node. `lost` first marks it down so the batch system requeues its jobs at once.
   * Idempotent: a node that is not there is not an error. Throws while jobs still run on it.
   */
  remove(node: string, lost: boolean): Promise<void>;
}

export const ABSENT: NodeView = { status: 'absent', cpus: 0, allocCpus: 0, memoryMb: 0, allocMemoryMb: 0 };
export const UNKNOWN_NODE: NodeView = { status: 'unknown', cpus: 0, allocCpus: 0, memoryMb: 0, allocMemoryMb: 0 };
