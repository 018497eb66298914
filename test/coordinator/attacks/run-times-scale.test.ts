// RunTimeHistory remembers up to MAX_KEYS * KEPT (1 000 000) job ids so a re-read counts no job
// twice. A busy site finishes more than that in the first read's week (array tasks each have their
// own JobIDRaw), and past it every new job costs an Array.shift() of a million-entry array (about
// 0.3 ms each here): 20 000 jobs block the event loop, and with it the loop, the status API and
// /metrics, for seconds; 200 000 past the mark for about a minute. Expected: adding a job costs
// the same however many are remembered (20 000 new jobs well under 2 s on this shared machine,
// about 60 ms when the cost is constant).
import { describe, expect, it } from 'vitest';
import { type FinishedJob, RunTimeHistory } from '../../../coordinator/run-times.ts';

const jobs = (from: number, n: number): FinishedJob[] =>
  Array.from({ length: n }, (_, i) => ({ id: String(from + i), user: `u${i % 50}`, partition: 'batch', name: `n${i % 300}`, elapsedMs: 60_000 + i }));

describe('run-time history at a busy site', () => {
  it('adding 20 000 finished jobs past a million remembered ids does not stall the loop', { timeout: 60_000 }, () => {
    const h = new RunTimeHistory();
    h.add(jobs(0, 1_000_000));
    const t = performance.now();
    h.add(jobs(1_000_000, 20_000));
    const ms = performance.now() - t;
    expect(ms).toBeLessThan(2000);
  });
});
