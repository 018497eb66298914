// "When a busy core frees" (docs/COORDINATOR.md): "it frees at start + estimate; a job already
// past its estimate frees in half the time left to its limit". A job with no time limit
// (a partition with MaxTime=INFINITE and no DefaultTime: squeue prints INFINITE) has no limit to
// halve: today freesIn answers 0, "frees now", however long it has run — a job 300 days into a
// run with no end is planned as an idle core. The plan that times the spot tail by these starts
// then puts waiting jobs on a core that will not free. Expected: a job with no limit past its
// estimate is timed as one whose job is unknown (undefined), never as a core free now.

import { expect, test } from 'vitest';
import { busyCores, freesIn } from '../../../coordinator/busy-cores.ts';
import { parseQueue } from '../../../coordinator/batch/slurm-parse.ts';

const HOUR = 3_600_000;
const now = Date.UTC(2026, 10, 24, 8, 0, 0);

test('a no-limit job 2 h into a 1 h estimate is not a core free now', () => {
  const at = freesIn({ node: 'n1', cpus: 1, partition: 'p', startedAt: now - 2 * HOUR }, now, undefined, HOUR);
  expect(at === undefined || at > 0, `freesIn = ${at}`).toBe(true);
});

test('a no-limit job read from squeue --json (time_limit INFINITE), 300 days old, does not free now', () => {
  const doc = {
    jobs: [
      {
        job_id: 7,
        job_state: 'RUNNING',
        partition: 'p',
        nodes: 'home1',
        cpus: { set: true, infinite: false, number: 4 },
        start_time: { set: true, infinite: false, number: Math.floor((now - 300 * 24 * HOUR) / 1000) },
        time_limit: { set: false, infinite: true, number: 0 },
        user_name: 'alice',
        name: 'forever',
      },
    ],
  };
  const q = parseQueue(JSON.stringify(doc), ['p'], 'es-');
  expect(q.running).toHaveLength(1);
  const cores = busyCores(q.running, now, undefined, HOUR).get('home1') ?? [];
  // Either not listed (unknown) or freeing later than now; 0 says four idle cores.
  expect(cores.filter((t) => t === 0), JSON.stringify(cores)).toEqual([]);
});
