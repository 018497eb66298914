// A simulated Slurm behind the coordinator's BatchSystem contract: fixed home nodes plus the
// drones' nodes, which register when their instance has booted (as slurmd -Z does). Scheduling
// is FIFO with first-fit backfill: pending jobs are taken in submit order, each on the first
// node (home nodes first, as Slurm's node weights put them) with enough free cores and memory
// whose features satisfy the job's constraints; a job that fits nowhere does not block later
// ones (no reservation for the head job: with the single-node jobs of these traces, EASY
// backfill's reservation would only delay work that fits now). A job reads its inputs through
// the World (links and caches), runs, sends its results home, and frees its cores.

import { parseConstraint } from '../batch/slurm-parse.ts';
import type { BatchSystem, FinishedRead, HomeView, Queue } from '../batch/types.ts';
import type { Clock } from '../clock.ts';
import type { NodeView, PendingJob, RunningJob } from '../model.ts';
import type { FinishedJob } from '../run-times.ts';
import { HOLD_FEATURE } from '../steer.ts';
import type { TraceJob } from './trace.ts';
import type { World } from './world.ts';

export interface SimJob {
  readonly trace: TraceJob;
  readonly submittedAt: number;
  constraints: string[][];
  pending: PendingJob;
  /** Bumped on every start, so an end event of a run that was killed is ignored. */
  gen: number;
  startedAt?: number;
  endedAt?: number;
  node?: SimNode;
  /** Start of the current run; waits are measured to the first start. */
  firstStart?: number;
}

export interface SimNode {
  readonly name: string;
  /** The place whose links and cache the node's jobs use ("home" or the drone's site). */
  readonly place: string;
  readonly cpus: number;
  readonly memoryMb: number;
  readonly features: ReadonlySet<string>;
  /** Pool key: nodes with equal features share one; matching is cached per signature. */
  readonly signature: string;
  readonly home: boolean;
  alloc: number;
  allocMem: number;
  state: 'available' | 'draining';
  jobs: Set<SimJob>;
}

export type JobEnd = { at: number; kind: 'end'; job: SimJob; gen: number };

const PARTITION = 'hybrid';

export class SimBatch implements BatchSystem {
  readonly kind = 'sim';
  readonly nodes_ = new Map<string, SimNode>();
  private readonly removed = new Set<string>();
  private pendingJobs: SimJob[] = [];
  /** Jobs before this index have started: a started prefix is skipped, not copied away. */
  private head = 0;
  private sorted = true;
  private view: PendingJob[] | undefined;
  running = { home: 0, drones: 0 };
  /** Job starts, and those of jobs a policy had steered (constraints set while pending). */
  starts = { all: 0, steered: 0 };
  /** Something changed that may let a pending job start. */
  dirty = false;
  private readonly matchCache = new Map<string, boolean>();
  /** Nodes that take jobs and have a free core: kept up to date, so scheduling never walks every node. */
  private readonly free = new Set<SimNode>();
  /** Jobs arrive held by estuary_hold (a job_submit plugin's doing) until the coordinator places them. */
  holdNew = false;
  /** Jobs that ran to their end, in the order they ended: the accounting sacct would read. */
  private readonly ended: { readonly at: number; readonly job: FinishedJob }[] = [];
  /** Live instances by name: a node whose instance is gone reads as down, as in Slurm. */
  instanceAlive: (name: string) => boolean = () => true;

  private readonly clock: Clock;
  private readonly world: World;
  private readonly emit: (ev: JobEnd) => void;

  constructor(clock: Clock, world: World, emit: (ev: JobEnd) => void) {
    this.clock = clock;
    this.world = world;
    this.emit = emit;
  }

  addHome(count: number, cpus: number, memoryMb: number, feature: string): void {
    for (let i = 1; i <= count; i++) this.addNode(`home-${i}`, 'home', cpus, memoryMb, [feature], true);
  }

  addNode(name: string, place: string, cpus: number, memoryMb: number, features: readonly string[], home = false): void {
    if (this.removed.has(name) || this.nodes_.has(name)) return;
    const sig = [...features].sort().join(',');
    const node: SimNode = { name, place, cpus, memoryMb, features: new Set(features), signature: sig, home, alloc: 0, allocMem: 0, state: 'available', jobs: new Set() };
    this.nodes_.set(name, node);
    this.free.add(node);
    this.dirty = true;
  }

  submit(job: TraceJob, at: number): void {
    const constraints = this.holdNew ? [[HOLD_FEATURE]] : [];
    const pending: PendingJob = {
      id: job.id,
      partition: PARTITION,
      cpus: job.cpus,
      memoryMb: job.memoryMb,
      constraints,
      inputs: job.inputs,
      ...(job.outputBytes > 0 ? { outputBytes: job.outputBytes } : {}),
      ...(job.timeLimitMs ? { timeLimitMs: job.timeLimitMs } : {}),
      user: job.user,
      name: job.name,
      submittedAt: at,
      reason: 'Resources',
    };
    this.enqueue({ trace: job, submittedAt: at, constraints, pending, gen: 0 });
  }

  private enqueue(j: SimJob): void {
    const last = this.pendingJobs[this.pendingJobs.length - 1];
    if (last && last.submittedAt > j.submittedAt) this.sorted = false;
    this.pendingJobs.push(j);
    this.view = undefined;
    this.dirty = true;
  }

  get pendingCount(): number {
    return this.pendingJobs.length - this.head;
  }

  private compact(): void {
    if (this.head === 0) return;
    this.pendingJobs = this.pendingJobs.slice(this.head);
    this.head = 0;
  }

  async queue(prefix: string): Promise<Queue> {
    void prefix;
    this.view ??= this.pendingJobs.slice(this.head).map((j) => j.pending);
    return { pending: this.view, runningAtHome: this.running.home, runningOnDrones: this.running.drones, running: this.runningJobs(), ...this.home() };
  }

  /** Every running job with its node and start time, as `squeue --json` reports them. */
  private runningJobs(): RunningJob[] {
    const out: RunningJob[] = [];
    for (const n of this.nodes_.values())
      for (const j of n.jobs)
        out.push({
          node: n.name,
          cpus: j.trace.cpus,
          partition: PARTITION,
          user: j.trace.user,
          name: j.trace.name,
          ...(j.trace.timeLimitMs ? { timeLimitMs: j.trace.timeLimitMs } : {}),
          ...(j.startedAt !== undefined ? { startedAt: j.startedAt } : {}),
        });
    return out;
  }

  /** The home nodes' cores, as `sinfo` reports a partition's CPUs (allocated/idle/other/total). */
  private home(): { home?: HomeView } {
    let cores = 0;
    let idleCores = 0;
    let nodeCores = 0;
    let nodeMemoryMb = 0;
    for (const n of this.nodes_.values())
      if (n.home) {
        cores += n.cpus;
        idleCores += n.cpus - n.alloc;
        nodeCores = Math.max(nodeCores, n.cpus);
        nodeMemoryMb = Math.max(nodeMemoryMb, n.memoryMb);
      }
    return cores > 0 ? { home: { cores, idleCores, nodeCores, nodeMemoryMb } } : {};
  }

  async nodes(prefix: string): Promise<Map<string, NodeView>> {
    const out = new Map<string, NodeView>();
    for (const n of this.nodes_.values()) {
      if (n.home || !n.name.startsWith(prefix)) continue;
      const down = !this.instanceAlive(n.name);
      const status = down ? 'down' : n.state === 'draining' ? (n.alloc === 0 ? 'drained' : 'draining') : 'available';
      out.set(n.name, { status, cpus: n.cpus, allocCpus: n.alloc, memoryMb: n.memoryMb, allocMemoryMb: n.allocMem });
    }
    return out;
  }

  /** The simulated Slurm's clock is the simulation's. */
  accountingTime(): number {
    return this.clock.now();
  }

  /** Jobs that ended since `sinceMs` (up to `untilMs`), their run time from start to end as Slurm accounts it. */
  async finished(sinceMs: number, untilMs = Infinity): Promise<FinishedRead> {
    let i = this.ended.length;
    while (i > 0 && this.ended[i - 1]!.at >= sinceMs) i--;
    const jobs = this.ended.slice(i).filter((e) => e.at <= untilMs);
    return { jobs: jobs.map((e) => e.job), source: 'simulated accounting', skipped: 0 };
  }

  async integrate(): Promise<void> {}

  async steer(jobIds: readonly string[], features: string): Promise<void> {
    const ids = new Set(jobIds);
    const constraints = parseConstraint(features);
    for (let k = this.head; k < this.pendingJobs.length; k++) {
      const j = this.pendingJobs[k]!;
      if (ids.has(j.pending.id)) {
        j.constraints = constraints;
        j.pending = { ...j.pending, constraints };
      }
    }
    this.view = undefined;
    this.dirty = true;
  }

  async drain(node: string): Promise<void> {
    const n = this.nodes_.get(node);
    if (n && n.state === 'available') {
      n.state = 'draining';
      this.free.delete(n);
    }
  }

  async remove(node: string, lost: boolean): Promise<void> {
    const n = this.nodes_.get(node);
    if (!n) return;
    if (n.jobs.size > 0 && !lost && this.instanceAlive(node)) throw new Error('Requested nodes are busy');
    this.lose(node);
    this.removed.add(node);
  }

  /** The node died (instance reclaimed or stopped under it): its jobs go back to the queue. */
  lose(node: string): void {
    const n = this.nodes_.get(node);
    if (!n) return;
    const now = this.clock.now();
    for (const j of n.jobs) {
      this.world.accounts.busyCoreMs += j.trace.cpus * (now - j.startedAt!);
      this.running.drones--;
      j.gen++;
      j.node = undefined;
      j.startedAt = undefined;
      this.enqueue(j);
    }
    n.jobs.clear();
    this.free.delete(n);
    this.nodes_.delete(node);
  }

  private matches(j: SimJob, n: SimNode): boolean {
    if (j.constraints.length === 0) return true;
    const key = `${JSON.stringify(j.constraints)}@${n.signature}`;
    let hit = this.matchCache.get(key);
    if (hit === undefined) {
      hit = j.constraints.every((anyOf) => anyOf.some((f) => n.features.has(f)));
      this.matchCache.set(key, hit);
    }
    return hit;
  }

  /** Starts every pending job that fits now; cheap when nothing changed since the last call. */
  schedule(): void {
    if (!this.dirty) return;
    this.dirty = false;
    if (!this.sorted) {
      this.compact();
      this.pendingJobs.sort((a, b) => a.submittedAt - b.submittedAt);
      this.sorted = true;
    }
    // Free nodes grouped by signature: a job is checked against each group once, not each node.
    const groups = new Map<string, SimNode[]>();
    let freeCores = 0;
    for (const n of this.free)
      if (n.home || this.instanceAlive(n.name)) {
        const g = groups.get(n.signature) ?? [];
        g.push(n);
        groups.set(n.signature, g);
        freeCores += n.cpus - n.alloc;
      }
    if (freeCores === 0) return;
    const order = [...groups.values()].sort((a, b) => Number(b[0]!.home) - Number(a[0]!.home));
    const still: SimJob[] = [];
    const from = this.head;
    let i = from;
    for (; i < this.pendingJobs.length && freeCores > 0; i++) {
      const j = this.pendingJobs[i]!;
      const node = this.pick(j, order);
      if (!node) {
        still.push(j);
        continue;
      }
      freeCores -= j.trace.cpus;
      this.start(j, node);
    }
    if (still.length === i - from) return;
    this.view = undefined;
    if (still.length === 0) {
      // The usual case: a prefix started, nothing was passed over.
      this.head = i;
      if (this.head > 4096 && this.head * 2 > this.pendingJobs.length) this.compact();
    } else {
      this.pendingJobs = still.concat(this.pendingJobs.slice(i));
      this.head = 0;
    }
  }

  private pick(j: SimJob, groups: SimNode[][]): SimNode | undefined {
    for (const g of groups) {
      if (g.length === 0 || !this.matches(j, g[0]!)) continue;
      for (let k = 0; k < g.length; k++) {
        const n = g[k]!;
        if (n.cpus - n.alloc >= j.trace.cpus && n.memoryMb - n.allocMem >= j.trace.memoryMb) {
          if (n.alloc + j.trace.cpus >= n.cpus) g.splice(k, 1);
          return n;
        }
      }
    }
    return undefined;
  }

  private start(j: SimJob, n: SimNode): void {
    const now = this.clock.now();
    n.alloc += j.trace.cpus;
    n.allocMem += j.trace.memoryMb;
    if (n.alloc >= n.cpus) this.free.delete(n);
    n.jobs.add(j);
    j.node = n;
    j.startedAt = now;
    j.firstStart ??= now;
    this.starts.all++;
    if (j.constraints.length > 0) this.starts.steered++;
    j.gen++;
    if (n.home) this.running.home++;
    else this.running.drones++;
    let ready = now;
    for (const input of j.trace.inputs) ready = Math.max(ready, this.world.fetch(n.place, input.url, input.bytes, now));
    const computed = ready + j.trace.runtime;
    const end = this.world.sendHome(n.place, j.trace.outputBytes, computed);
    // Slurm ends a job at its time limit (TIMEOUT; OverTimeLimit's grace is 0 by default), however
    // long the trace says its work ran: a job of an archive's log may have outrun what it asked for.
    const limit = j.trace.timeLimitMs !== undefined ? now + j.trace.timeLimitMs : Infinity;
    this.emit({ at: Math.min(Math.max(end, computed), limit), kind: 'end', job: j, gen: j.gen });
  }

  /** A job's end event: frees its cores unless the run was killed meanwhile. */
  finish(ev: JobEnd): boolean {
    const j = ev.job;
    if (ev.gen !== j.gen || !j.node) return false;
    const n = j.node;
    n.alloc -= j.trace.cpus;
    n.allocMem -= j.trace.memoryMb;
    n.jobs.delete(j);
    if (n.state === 'available') this.free.add(n);
    if (n.home) this.running.home--;
    else {
      this.running.drones--;
      this.world.accounts.busyCoreMs += j.trace.cpus * (ev.at - j.startedAt!);
    }
    j.endedAt = ev.at;
    this.ended.push({ at: ev.at, job: { id: j.trace.id, user: j.trace.user, partition: PARTITION, name: j.trace.name, elapsedMs: ev.at - j.startedAt! } });
    j.node = undefined;
    this.dirty = true;
    return true;
  }
}
