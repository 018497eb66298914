// When a busy core frees: from the running job's start time (the batch system's word) and the
// run time learned for jobs of its kind (run-times.ts), so jobs started at different times free
// their cores at different times, and the plan sees the work's true tail. Start times are hostile
// input: one missing, in the future or older than the job could have run is not believed, and
// the core frees as a core whose job is unknown does (`unknownMs`). A job past its estimate with
// no time limit has no end to expect: unknown too, never "free now". A COMPLETING job has ended
// (its epilog holds the node for seconds): its cores free now, whatever its start says.
// Pure: numbers in, times out.

import type { RunningJob } from './model.ts';
import { estimateRunTime, type RunTimes } from './run-times.ts';

/** A start this far ahead of the clock is clock skew, read as "just started"; further, not believed. */
export const SKEW_MS = 60_000;
/** A job running longer than this is not believed to have started when the batch system says. */
const YEAR_MS = 365 * 24 * 3_600_000;

/** ms from `now` until the job's cores free, or undefined when its start time cannot be believed. */
export function freesIn(job: RunningJob, now: number, runTimes: RunTimes | undefined, configuredMs: number): number | undefined {
  if (job.completing) return 0;
  const start = job.startedAt;
  if (start === undefined || !Number.isFinite(start) || start <= 0 || start > now + SKEW_MS) return undefined;
  const elapsed = Math.max(0, now - start);
  // Slurm kills a job at its limit (plus OverTimeLimit, a few minutes): one older than that by
  // far did not start when it says.
  if (elapsed > YEAR_MS || (job.timeLimitMs !== undefined && elapsed > job.timeLimitMs + 3_600_000)) return undefined;
  const run = estimateRunTime(job, runTimes, configuredMs).ms;
  if (elapsed < run) return run - elapsed;
  // Past what jobs of its kind run: it ends by its limit, soon as a rule; half the time left.
  // With no limit (MaxTime=INFINITE) nothing bounds it: timed as a core whose job is unknown.
  return job.timeLimitMs !== undefined ? Math.max(0, job.timeLimitMs - elapsed) / 2 : undefined;
}

/**
 * Per node, when each of its busy cores frees (ms from now, one entry per core, soonest first),
 * for the running jobs whose start can be believed.
 */
export function busyCores(running: readonly RunningJob[] | undefined, now: number, runTimes: RunTimes | undefined, configuredMs: number): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const job of running ?? []) {
    const at = freesIn(job, now, runTimes, configuredMs);
    if (at === undefined) continue;
    const cores = out.get(job.node) ?? [];
    for (let i = 0; i < Math.max(1, Math.floor(job.cpus) || 1) && i < 1024; i++) cores.push(at);
    out.set(job.node, cores);
  }
  for (const cores of out.values()) cores.sort((a, b) => a - b);
  return out;
}

/** `busy` cores' free times: those known, then `unknownMs` for the rest (a core fewer if more are known). */
export function busyTimes(known: readonly number[] | undefined, busy: number, unknownMs: number): number[] {
  const out = (known ?? []).slice(0, busy);
  while (out.length < busy) out.push(unknownMs);
  return out;
}
