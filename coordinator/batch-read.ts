// Reading the batch system once an interval, and deciding whether the answer can be believed.
// Tenet 2 ("never stop work by mistake") rests on this file: a read that failed in any way —
// non-zero exit, timeout, unparsable output, Slurm's own `errors` array (22.05 exits 0 with one
// when slurmctld is down), or a node list that suddenly lacks every drone it held a moment ago —
// is "cannot read", and the loop then starts nothing and stops nothing.

import type { Clock } from './clock.ts';
import type { BatchSystem, Queue } from './batch/types.ts';
import type { Drone, NodeView } from './model.ts';

export type BatchRead =
  | { readonly ok: true; readonly queue: Queue; readonly nodes: Map<string, NodeView> }
  | { readonly ok: false; readonly error: string };

/**
 * States whose drone's node the batch system listed before: a read listing none of them all at
 * once is far likelier a controller that lost its view than every node deleted in one interval.
 */
const NODE_SEEN: ReadonlySet<Drone['state']> = new Set(['available', 'draining']);

/**
 * How long a node list lacking every drone must persist before it is believed. A restarted
 * slurmctld answers within a second and lists its dynamic nodes again once their slurmd
 * re-register (seconds); a minute is far beyond that and short next to what a truly lost
 * drone costs (its jobs are requeued a minute later than they could have been).
 */
export const ALL_GONE_BELIEVED_AFTER_MS = 60_000;

/** Drones whose node was seen, when `nodes` lists none of them; 0 when the list is plausible. */
export function missingEveryDrone(drones: readonly Drone[], nodes: ReadonlyMap<string, NodeView>): number {
  const seen = drones.filter((d) => NODE_SEEN.has(d.state));
  return seen.length > 0 && seen.every((d) => !nodes.has(d.id)) ? seen.length : 0;
}

export class BatchReader {
  private readonly batch: BatchSystem;
  private readonly prefix: string;
  private readonly clock: Clock;
  /** Since when every read has lacked every drone (undefined: the last read listed some). */
  private allGoneSince: number | undefined;

  constructor(batch: BatchSystem, prefix: string, clock: Clock) {
    this.batch = batch;
    this.prefix = prefix;
    this.clock = clock;
  }

  async read(drones: readonly Drone[]): Promise<BatchRead> {
    let queue: Queue;
    let nodes: Map<string, NodeView>;
    try {
      [queue, nodes] = await Promise.all([this.batch.queue(this.prefix), this.batch.nodes(this.prefix)]);
    } catch (err) {
      return { ok: false, error: (err as Error).message };
    }
    // The home cluster's cores from the node list, where the queue does not carry them (Slurm).
    const home = queue.home ?? this.batch.homeCores?.();
    if (home) queue = { ...queue, home };
    const missing = missingEveryDrone(drones, nodes);
    if (missing === 0) {
      this.allGoneSince = undefined;
      return { ok: true, queue, nodes };
    }
    const now = this.clock.now();
    this.allGoneSince ??= now;
    if (now - this.allGoneSince >= ALL_GONE_BELIEVED_AFTER_MS) return { ok: true, queue, nodes };
    return {
      ok: false,
      error: `the node list lacks all ${missing} drone node(s) it listed before; not believed for ${ALL_GONE_BELIEVED_AFTER_MS / 1000} s (a controller that lost its view, not ${missing} nodes gone at once)`,
    };
  }
}
