// Attack: the estimator's keys and floor (coordinator/run-times.ts), on hand-made history.
//
// 1. The key of a user's whole history is `user\npartition\n*` — the same string as the key of
//    that user's jobs NAMED `*` (sbatch -J '*' is a valid job name). Each finished job named `*`
//    is then pushed twice into one list: two jobs count as four, past MIN_JOBS (3), and the
//    estimate says "learned from 4 jobs". docs/COORDINATOR.md, "Run times": "finished jobs of the
//    same user, partition and job name (at least 3)", "of the same user and partition, any name
//    (at least 3)". Expected: two finished jobs are two, too few to learn from.
// 2. ElapsedRaw counts whole seconds, so a job that ran under a second reads 0: three such jobs
//    give a learned run time of 0 ms, and the plan then takes any number of that kind's pending
//    jobs as free and instant on one core ("each runs 0 s"). The docs' own floor for the
//    configured `runtime`: "at least 1s, as work of unknown length is not free of time".
//    Expected: a learned estimate is never below 1 s either.

import { describe, expect, it } from 'vitest';
import { estimateRunTime, RunTimeHistory } from '../../../coordinator/run-times.ts';

const job = (id: string, name: string, elapsedMs: number) => ({ id, user: 'alice', partition: 'hybrid', name, elapsedMs });

describe('run-time keys', () => {
  it('two finished jobs named "*" are two jobs, too few to learn from', () => {
    const h = new RunTimeHistory();
    h.add([job('1', '*', 60_000), job('2', '*', 60_000)]);
    const named = estimateRunTime({ user: 'alice', partition: 'hybrid', name: '*', timeLimitMs: 8 * 3_600_000 }, h.summary(), 3_600_000);
    expect(named).toEqual({ ms: 8 * 3_600_000, source: 'time limit' });
    const other = estimateRunTime({ user: 'alice', partition: 'hybrid', name: 'train', timeLimitMs: 8 * 3_600_000 }, h.summary(), 3_600_000);
    expect(other).toEqual({ ms: 8 * 3_600_000, source: 'time limit' });
  });

  it('jobs that ran under a second (ElapsedRaw 0) do not make a learned run time of 0', () => {
    const h = new RunTimeHistory();
    h.add([job('1', 'quick', 0), job('2', 'quick', 0), job('3', 'quick', 0)]);
    const e = estimateRunTime({ user: 'alice', partition: 'hybrid', name: 'quick' }, h.summary(), 3_600_000);
    expect(e.source).toBe('learned');
    expect(e.ms).toBeGreaterThanOrEqual(1000);
  });
});
