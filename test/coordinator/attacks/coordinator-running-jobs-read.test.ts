// What the coordinator reads of RUNNING and COMPLETING jobs from `squeue --json` (Slurm 22.05),
// "When a busy core frees" (docs/COORDINATOR.md).
//
// - A COMPLETING job has ended (its epilog or output staging holds the node for seconds): its
//   cores free now, whatever its start and estimate say. Today it is timed like a running job:
//   one that failed a minute after its start is planned busy for the 59 minutes left of its
//   estimate. Expected: a COMPLETING job's cores free within a minute.
// - Regression (holds today): 100,000 running jobs are read and timed in well under a second;
//   hostile start times (string, object without a number, 0, negative, far future, before 2000,
//   after 2200, older than the limit allows) are "unknown", never a number.

import { expect, test } from 'vitest';
import { parseQueue } from '../../../coordinator/batch/slurm-parse.ts';
import { busyCores } from '../../../coordinator/busy-cores.ts';

const HOUR = 3_600_000;
const now = Date.UTC(2026, 10, 24, 8, 0, 0);
const sec = (ms: number) => Math.floor(ms / 1000);
const n = (number: number) => ({ set: true, infinite: false, number });

function job(id: number, over: Record<string, unknown>): Record<string, unknown> {
  return { job_id: id, job_state: 'RUNNING', partition: 'p', nodes: 'home1', cpus: n(1), time_limit: n(60), user_name: 'u', name: 'j', start_time: n(sec(now - 60_000)), ...over };
}

test('a COMPLETING job frees its core now, not at start + estimate', () => {
  const q = parseQueue(JSON.stringify({ jobs: [job(1, { job_state: 'COMPLETING' })] }), ['p'], 'es-');
  const cores = busyCores(q.running, now, undefined, HOUR).get('home1');
  // Unknown (not listed) would time it as the cautious guess; listed, it must free within a minute.
  expect(cores, 'a COMPLETING job is listed with when it frees').toBeDefined();
  expect(Math.max(...cores!), JSON.stringify(cores)).toBeLessThanOrEqual(60_000);
});

test('hostile start times are unknown, never a free time', () => {
  const bad: unknown[] = ['1763971200', { set: false, number: sec(now - 60_000) }, { set: true }, n(0), n(-5), n(sec(now + 2 * HOUR)), n(900_000_000), n(7_300_000_000), n(sec(now - 3 * HOUR)), null, [], true, n(Number.NaN)];
  const q = parseQueue(JSON.stringify({ jobs: bad.map((s, i) => job(i + 1, { start_time: s, nodes: `h${i}` })) }), ['p'], 'es-');
  expect(q.running).toHaveLength(bad.length);
  const cores = busyCores(q.running, now, undefined, HOUR);
  expect([...cores.keys()]).toEqual([]);
});

test('100,000 running jobs are read and timed in under 2 s', () => {
  const jobs = Array.from({ length: 100_000 }, (_, i) => job(i + 1, { nodes: `h${i % 500}`, start_time: n(sec(now - (i % 3000) * 1000)) }));
  const t = performance.now();
  const q = parseQueue(JSON.stringify({ jobs }), ['p'], 'es-');
  const cores = busyCores(q.running, now, undefined, HOUR);
  expect(performance.now() - t).toBeLessThan(2000);
  expect(cores.size).toBe(500);
});
