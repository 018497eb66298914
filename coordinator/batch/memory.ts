// A batch system in memory, for unit tests and simulation: nodes join when their site instance
// runs, pending jobs are whatever the test queues, and jobs are placed on idle node CPUs by
// schedule(). Its nodes track a MemorySite, as real slurmd's track their instances.

import type { NodeView, PendingJob, RunningJob } from '../model.ts';
import type { MemorySite } from '../sites/memory.ts';
import { parseConstraint } from './slurm-parse.ts';
import type { BatchSystem, FinishedRead, Queue } from './types.ts';
import type { FinishedJob } from '../run-times.ts';

interface Node {
  cpus: number;
  memoryMb: number;
  alloc: number;
  /** The jobs schedule() started on it, oldest first (a test that sets `alloc` lists none). */
  jobs?: RunningJob[];
  state: 'available' | 'draining' | 'down';
}

export class MemoryBatch implements BatchSystem {
  readonly kind = 'memory';
  readonly nodesByName = new Map<string, Node>();
  pending: PendingJob[] = [];
  down = false;
  /** What every home node carries (none by default: no home feature to steer with). */
  home: string[] = [];
  homeFeatures(): readonly string[] {
    return this.home;
  }
  /** Finished jobs the accounting lists; a string: the error it answers with instead. */
  history: readonly FinishedJob[] | string = 'no accounting in memory';
  async finished(): Promise<FinishedRead> {
    if (typeof this.history === 'string') throw new Error(this.history);
    return { jobs: this.history, source: 'memory', skipped: 0 };
  }
  /** Nodes whose delete Slurm refuses as busy (a job still completing on them). */
  busyOnDelete = new Set<string>();
  /** The clock schedule() stamps start times with. */
  now: () => number = Date.now;
  /** Answers, but lists none of the drones' nodes (a controller that lost its view). */
  hideNodes = false;
  integrated: string[] = [];
  /** Every steer call, in order. */
  steered: { jobIds: string[]; features: string }[] = [];
  /** As in Slurm, a node deleted while its worker runs cannot register again. */
  private readonly removed = new Set<string>();
  private readonly sites: readonly MemorySite[];

  constructor(sites: readonly MemorySite[]) {
    this.sites = sites;
  }

  private check(): void {
    if (this.down) throw new Error('slurmctld not responding');
  }

  /** Running instances register their node, as slurmd -Z does. */
  private sync(): void {
    for (const site of this.sites)
      for (const [id, i] of site.instances)
        if (i.status === 'running' && !this.nodesByName.has(id) && !this.removed.has(id))
          this.nodesByName.set(id, { cpus: i.spec.cores, memoryMb: i.spec.memoryMb, alloc: 0, state: 'available' });
  }

  async queue(prefix: string): Promise<Queue> {
    this.check();
    const running = [...this.nodesByName.entries()].filter(([name]) => name.startsWith(prefix));
    return {
      pending: [...this.pending],
      runningAtHome: 0,
      // One job per allocated CPU: the tests' jobs are single-core.
      runningOnDrones: running.reduce((s, [, n]) => s + n.alloc, 0),
      running: [...this.nodesByName.values()].flatMap((n) => n.jobs ?? []),
    };
  }

  async nodes(prefix: string): Promise<Map<string, NodeView>> {
    this.check();
    this.sync();
    const out = new Map<string, NodeView>();
    if (this.hideNodes) return out;
    for (const [name, n] of this.nodesByName) {
      if (!name.startsWith(prefix)) continue;
      const gone = !this.sites.some((s) => s.instances.has(name));
      const status = gone || n.state === 'down' ? 'down' : n.state === 'draining' ? (n.alloc === 0 ? 'drained' : 'draining') : 'available';
      out.set(name, { status, cpus: n.cpus, allocCpus: n.alloc, memoryMb: n.memoryMb, allocMemoryMb: 0 });
    }
    return out;
  }

  async integrate(node: string): Promise<void> {
    this.check();
    this.integrated.push(node);
  }

  async steer(jobIds: readonly string[], features: string): Promise<void> {
    this.check();
    const ids = new Set(jobIds);
    this.pending = this.pending.map((j) => (ids.has(j.id) ? { ...j, constraints: parseConstraint(features) } : j));
    this.steered.push({ jobIds: [...jobIds], features });
  }

  async drain(node: string): Promise<void> {
    this.check();
    const n = this.nodesByName.get(node);
    if (n && n.state === 'available') n.state = 'draining';
  }

  async remove(node: string, lost: boolean): Promise<void> {
    this.check();
    const n = this.nodesByName.get(node);
    if (!n) return;
    if ((n.alloc > 0 || this.busyOnDelete.has(node)) && !lost) throw new Error('Requested nodes are busy');
    this.nodesByName.delete(node);
    this.removed.add(node);
  }

  /** Runs pending jobs on free CPUs of available nodes; returns the placements. */
  schedule(): { job: string; node: string }[] {
    this.sync();
    const placed: { job: string; node: string }[] = [];
    for (const job of [...this.pending]) {
      const hit = [...this.nodesByName.entries()].find(([, n]) => n.state === 'available' && n.cpus - n.alloc >= job.cpus);
      if (!hit) continue;
      hit[1].alloc += job.cpus;
      const { user, name, timeLimitMs } = job;
      (hit[1].jobs ??= []).push({ node: hit[0], cpus: job.cpus, partition: job.partition, ...(user ? { user } : {}), ...(name ? { name } : {}), ...(timeLimitMs ? { timeLimitMs } : {}), startedAt: this.now() });
      this.pending = this.pending.filter((j) => j !== job);
      placed.push({ job: job.id, node: hit[0] });
    }
    return placed;
  }

  finish(node: string, cpus: number): void {
    const n = this.nodesByName.get(node);
    if (!n) return;
    n.alloc = Math.max(0, n.alloc - cpus);
    // The oldest jobs end first, as many cores as were freed.
    for (let left = cpus; left > 0 && n.jobs?.length; ) left -= n.jobs.shift()!.cpus;
  }
}
