// A large backlog steered at once: a burst of held jobs (`hold: true`) or a job array of tens of
// thousands of tasks, all placed at one site in one interval. Grouping them into scontrol calls
// (steerRequests, coordinator/steer.ts) copies the site's whole id list for every job appended,
// so the work grows with the square of the backlog: 10 000 jobs 0.27 s, 20 000 5.4 s, 40 000
// 42 s, 80 000 183 s (load average about 20). That runs inside the control loop's interval, on
// the one event loop that also answers /api/v1/status and /metrics: the coordinator stalls for
// the length of it. Expected: grouping is linear (a 25 000-job burst in well under a second).

import { expect, test } from 'vitest';
import type { PendingJob } from '../../../coordinator/model.ts';
import { steerRequests } from '../../../coordinator/steer.ts';

test('grouping a 25 000-job placement into steering calls takes well under two seconds', () => {
  const n = 25_000;
  const pending: PendingJob[] = Array.from({ length: n }, (_, i) => ({ id: String(i + 1), partition: 'hybrid', cpus: 1, memoryMb: 1000, constraints: [], inputs: [], submittedAt: 0, reason: 'Resources' }));
  const placed = new Map(pending.map((j) => [j.id, 'aws']));
  const t = performance.now();
  const requests = steerRequests(pending, placed, 'home');
  const ms = performance.now() - t;
  expect(requests).toHaveLength(1);
  expect(requests[0]!.jobIds).toHaveLength(n);
  expect(requests[0]!.features).toBe('site_aws|home');
  expect(ms, `steerRequests took ${Math.round(ms)} ms for ${n} jobs`).toBeLessThan(2000);
}, 120_000);
