// When spot stops taking work: the tail of the work goes on demand once a reclaim is likely to
// delay its end.
//
// A reclaimed job starts again from nothing on a new drone. In the middle of a long run that
// costs its lost work and nothing more: the restart runs while other work still does. At the end
// it moves the end itself: a job reclaimed halfway through (the average moment) finishes a boot
// and half a run after it would have. So the policy asks two things of the spot pool's plan:
//
// - which of its jobs are tail jobs, whose restart after a reclaim halfway through would finish
//   past the end of the work (the plan's last finish, or the turnaround if that is later), and
//   does the first of them start within a boot? Until then the drones take the jobs before the
//   tail, on spot; then the on-demand drones for the tail, opened now, are there when it starts.
//   The plan's starts come from when busy cores free (busy-cores.ts: the running jobs' starts),
//   so jobs that started at different times open the tail at different times;
// - is a reclaim among those tail jobs more likely than not, at the reclaim rate the site states
//   (per instance-hour, over the instance-hours they would run on spot)? A site that states a
//   rate of 0 keeps spot to the end; a handful of short jobs does too. Jobs placed nowhere for
//   now (the quota is full) count with them: they start later still.
//
// When both hold, spot takes no new job: the spot drones drain (each ends its running job, a
// reclaim of which is still absorbed: it started before the tail) and the waiting work is placed
// as if the site sold on demand only. The batch system does not choose a node by its market, so
// a spot drone left taking jobs would take tail jobs as soon as it frees: the whole pool drains.
// Save for the jobs on demand cannot take (over budget, no room the drain frees): those stay on
// spot (estuary-policy.ts), since a reclaim delays a job and not running delays it forever.
// Pure: numbers in, a verdict out.

import { HOUR_MS } from './cost.ts';

/** A job the plan placed in a spot pool: when it starts and finishes (ms from now), its run. */
export interface PlannedRun {
  readonly start: number;
  readonly finish: number;
  readonly runMs: number;
  readonly cpus: number;
}

export interface SpotTail {
  /** The first job the pool would start, and when it would finish. */
  readonly nextFinishMs: number;
  /** The end of the work as planned, or the turnaround if later. */
  readonly endMs: number;
  /** Jobs its drones take next that a reclaim halfway through would push past that end. */
  readonly tailJobs: number;
  /** The chance that at least one of them is reclaimed, at the stated rate. */
  readonly reclaimChance: number;
}

/** More likely than not: the tail goes on demand once a reclaim among it is the expected case. */
export const TAIL_RECLAIM_CHANCE = 0.5;

/**
 * The tail as the spot pool's plan shows it, or undefined while spot should keep taking work.
 * `cores` are a drone's: a job of `cpus` cores pays that share of its instance's reclaims.
 */
export function spotTail(
  runs: readonly PlannedRun[],
  waiting: readonly Pick<PlannedRun, 'runMs' | 'cpus'>[],
  endMs: number,
  turnaroundMs: number,
  bootMs: number,
  ratePerHour: number,
  cores: number,
): SpotTail | undefined {
  if (runs.length === 0 || ratePerHour <= 0) return undefined;
  const end = Math.max(turnaroundMs, endMs);
  const late = (r: PlannedRun) => r.finish + bootMs + r.runMs / 2 > end;
  const tail = runs.filter(late);
  if (tail.length === 0) return undefined;
  // Spot takes every job before the tail: the pool closes only once the first tail job would
  // start within a boot, the time an on-demand drone needs to be there for it.
  const next = tail.reduce((a, b) => (b.start < a.start ? b : a));
  if (next.start > bootMs) return undefined;
  // Jobs placed nowhere for now (no room) start later still: tail jobs too, once spot has some.
  const all = [...tail, ...waiting];
  const instanceHours = all.reduce((s, r) => s + (r.runMs / HOUR_MS) * (Math.min(r.cpus, cores) / cores), 0);
  const reclaimChance = 1 - Math.exp(-ratePerHour * instanceHours);
  if (reclaimChance < TAIL_RECLAIM_CHANCE) return undefined;
  return { nextFinishMs: next.finish, endMs: end, tailJobs: all.length, reclaimChance };
}
