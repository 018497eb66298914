// Run times learned from finished jobs. A job's time limit is a worst case, not what it takes:
// the batch system kills a job at its limit, so users ask for more than they expect to need, and
// a policy that costs and times work by its limit opens drones for hours of work that lasts
// minutes. The jobs that finished say better: work of the same user, partition and job name (the
// same script, as a rule) runs about as long as it did before.
//
// The estimate for a pending job, from the most specific of:
//   1. finished jobs of the same user, partition and job name (at least MIN_JOBS of them),
//   2. finished jobs of the same user and partition (at least MIN_JOBS),
//   3. its time limit,
//   4. the configured `runtime`.
// A learned estimate is the 90th percentile of the last KEPT runs of its key, never more than the
// job's time limit (the batch system ends it there). A high percentile, not the mean or median:
// the policy sizes the burst so the waiting work finishes within the turnaround, and a median
// plans half the jobs too short (on kek-figure8, runs of 20–40 min, it left 343 idle core-hours
// against 317 with the 90th percentile, docs/BENCHMARKING.md); and a percentile, not the maximum,
// so one runaway job or a few hostile accounting records move it little.
// Pure: the batch adapter reads the history, the coordinator keeps it, the policy asks it.

/** One finished job, as the batch system's accounting reports it. */
export interface FinishedJob {
  readonly id: string;
  readonly user: string;
  readonly partition: string;
  readonly name: string;
  /** Its run time: end minus start. */
  readonly elapsedMs: number;
}

/** Per key: the run time (90th percentile, see above) and how many finished jobs it is taken over. */
export type RunTimes = ReadonlyMap<string, { readonly ms: number; readonly jobs: number }>;

export type EstimateSource = 'learned' | 'time limit' | 'configured';

export interface RunEstimate {
  readonly ms: number;
  readonly source: EstimateSource;
  /** Finished jobs a learned estimate is taken over. */
  readonly jobs?: number;
}

/** The percentile a learned estimate is (see above). */
export const QUANTILE = 0.9;
/**
 * The least a learned estimate is: ElapsedRaw counts whole seconds, so a job that ran under one
 * reads 0, and work of unknown length is not free of time (as the configured `runtime`'s floor).
 */
export const MIN_LEARNED_MS = 1000;
/** Fewer finished jobs than this say too little: two runs could be a test and a failure. */
export const MIN_JOBS = 3;
/** Runs kept per key: the recent past, so a code change shows within a hundred jobs. */
export const KEPT = 100;
/**
 * Distinct keys kept per user; that user's least recently seen go first (one-off job names). Per
 * user, so one user's many names (a loop of sbatch) evict that user's history, never another's.
 */
export const MAX_KEYS = 1000;
/** Job ids remembered so that a re-read counts no job twice; the oldest are forgotten first. */
export const MAX_SEEN = 1_000_000;

/** Key of the most specific history: user, partition and job name. */
export const nameKey = (user: string, partition: string, name: string): string => `${user}\n${partition}\n${name}`;
/**
 * Key of the broader history: user and partition, any job name. Two parts where a name key has
 * three, so no job name (`*` is one: `sbatch -J '*'`) can be the same key.
 */
export const userKey = (user: string, partition: string): string => `${user}\n${partition}`;

/** A run kept under a key: its job's id, so that a record read later can take it back out. */
interface Run {
  readonly id: string;
  readonly ms: number;
}

/** Finished jobs' run times, the last KEPT per key, each job counted once however often read. */
export class RunTimeHistory {
  /** Per user, their keys in least-recently-seen order (a Map iterates in insertion order). */
  private readonly runs = new Map<string, Map<string, Run[]>>();
  private readonly seen = new Set<string>();
  /** The remembered ids as a ring: the next slot to fill is the oldest, forgotten then (O(1)). */
  private readonly seenOrder: string[] = [];
  private seenNext = 0;
  private cached: RunTimes | undefined;

  /** Adds the jobs not added before; returns how many were new. */
  add(jobs: readonly FinishedJob[]): number {
    let added = 0;
    for (const j of jobs) {
      if (this.seen.has(j.id)) continue;
      this.remember(j.id);
      const run = { id: j.id, ms: j.elapsedMs };
      this.push(j.user, nameKey(j.user, j.partition, j.name), run);
      this.push(j.user, userKey(j.user, j.partition), run);
      added++;
    }
    if (added) this.cached = undefined;
    return added;
  }

  /**
   * Takes jobs learned before back out (a record read later showed they cannot be read as
   * written: a second record of the id, a second uid of the user): their runs and their ids, as
   * if they had never been added. A key left with no run is gone. A key that had dropped older
   * runs past KEPT does not get them back: it holds one run fewer until its next job.
   */
  remove(jobs: readonly { readonly id: string; readonly user: string }[]): void {
    const byUser = new Map<string, Set<string>>();
    for (const j of jobs) {
      if (!this.seen.delete(j.id)) continue;
      let ids = byUser.get(j.user);
      if (!ids) byUser.set(j.user, (ids = new Set()));
      ids.add(j.id);
    }
    for (const [user, ids] of byUser) {
      const keys = this.runs.get(user);
      if (!keys) continue;
      for (const [key, runs] of keys) {
        const kept = runs.filter((r) => !ids.has(r.id));
        if (kept.length === 0) keys.delete(key);
        else if (kept.length < runs.length) keys.set(key, kept);
      }
      if (keys.size === 0) this.runs.delete(user);
    }
    if (byUser.size) this.cached = undefined;
  }

  /** Jobs remembered (as ids, so that a re-read does not count them twice). */
  get size(): number {
    return this.seen.size;
  }

  /** The estimates per key, computed once per change. */
  summary(): RunTimes {
    if (this.cached) return this.cached;
    const out = new Map<string, { ms: number; jobs: number }>();
    for (const keys of this.runs.values()) for (const [key, runs] of keys) out.set(key, { ms: Math.max(MIN_LEARNED_MS, quantile(runs.map((r) => r.ms), QUANTILE)), jobs: runs.length });
    this.cached = out;
    return out;
  }

  private push(user: string, key: string, run: Run): void {
    let keys = this.runs.get(user);
    if (!keys) this.runs.set(user, (keys = new Map()));
    let runs = keys.get(key);
    if (runs) keys.delete(key);
    else runs = [];
    runs.push(run);
    if (runs.length > KEPT) runs.shift();
    // Re-inserted: the first key is then the user's least recent.
    keys.set(key, runs);
    if (keys.size > MAX_KEYS) keys.delete(keys.keys().next().value!);
  }

  private remember(id: string): void {
    // Ids of jobs long gone from the batch system's answer need not be remembered.
    if (this.seenOrder.length < MAX_SEEN) this.seenOrder.push(id);
    else {
      this.seen.delete(this.seenOrder[this.seenNext]!);
      this.seenOrder[this.seenNext] = id;
      this.seenNext = (this.seenNext + 1) % MAX_SEEN;
    }
    this.seen.add(id);
  }
}

function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
}

/** What the job is expected to run, and from what the estimate came. */
export function estimateRunTime(
  job: { readonly user?: string; readonly partition: string; readonly name?: string; readonly timeLimitMs?: number },
  runTimes: RunTimes | undefined,
  configuredMs: number,
): RunEstimate {
  if (runTimes && job.user !== undefined) {
    const learned = (job.name !== undefined ? usable(runTimes.get(nameKey(job.user, job.partition, job.name))) : undefined) ?? usable(runTimes.get(userKey(job.user, job.partition)));
    if (learned) return { ms: Math.min(learned.ms, job.timeLimitMs ?? Infinity), source: 'learned', jobs: learned.jobs };
  }
  if (job.timeLimitMs !== undefined) return { ms: job.timeLimitMs, source: 'time limit' };
  return { ms: configuredMs, source: 'configured' };
}

const usable = (h: { ms: number; jobs: number } | undefined) => (h && h.jobs >= MIN_JOBS ? h : undefined);

/** How an estimate reads in a decision's sentence: "learned from 12 jobs", "time limit", "configured runtime". */
export function estimateText(e: RunEstimate): string {
  if (e.source === 'learned') return `learned from ${e.jobs} job${e.jobs === 1 ? '' : 's'}`;
  return e.source === 'time limit' ? 'time limit' : 'configured runtime';
}
