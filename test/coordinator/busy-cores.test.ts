// When a busy core frees, from its job's start time and the learned run time; hostile start
// times (missing, 0, in the future, older than the job could run) are not believed.

import { describe, expect, it } from 'vitest';
import { MemoryBatch } from '../../coordinator/batch/memory.ts';
import { busyCores, busyTimes, freesIn } from '../../coordinator/busy-cores.ts';
import type { RunningJob } from '../../coordinator/model.ts';
import { nameKey } from '../../coordinator/run-times.ts';

const H = 3_600_000;
const NOW = 1_000 * 86_400_000;
const job = (o: Partial<RunningJob>): RunningJob => ({ node: 'n1', cpus: 1, partition: 'p', user: 'ana', name: 'reco', timeLimitMs: 4 * H, startedAt: NOW - H, ...o });
const learned = new Map([[nameKey('ana', 'p', 'reco'), { ms: 1.5 * H, jobs: 10 }]]);

describe('freesIn', () => {
  it('is the learned run time less what the job has run, else its time limit less that', () => {
    expect(freesIn(job({}), NOW, learned, 9 * H)).toBe(0.5 * H);
    expect(freesIn(job({}), NOW, undefined, 9 * H)).toBe(3 * H);
    expect(freesIn(job({ timeLimitMs: undefined }), NOW, undefined, 2 * H)).toBe(H);
  });

  it('past what jobs of its kind run, half the time left to its limit', () => {
    expect(freesIn(job({ startedAt: NOW - 2 * H }), NOW, learned, 9 * H)).toBe(H);
  });

  it('believes no start that is missing, 0, not a number, in the future beyond a minute, or older than the job could run', () => {
    for (const startedAt of [undefined, 0, -5, Number.NaN, Infinity, NOW + 2 * 60_000, NOW - 6 * H, NOW - 400 * 24 * H])
      expect(freesIn(job({ startedAt }), NOW, learned, 9 * H)).toBeUndefined();
    expect(freesIn(job({ startedAt: NOW - 400 * 24 * H, timeLimitMs: undefined }), NOW, learned, 9 * H)).toBeUndefined();
    // A start within a minute ahead is clock skew: the job has just started.
    expect(freesIn(job({ startedAt: NOW + 30_000 }), NOW, learned, 9 * H)).toBe(1.5 * H);
  });
});

describe('busyCores', () => {
  it("gives each node one time per busy core, soonest first, and leaves out jobs whose start is not believed", () => {
    const m = busyCores([job({ cpus: 2 }), job({ startedAt: NOW - 0.5 * H }), job({ node: 'n2', startedAt: 0 })], NOW, learned, 9 * H);
    expect(m.get('n1')).toEqual([0.5 * H, 0.5 * H, H]);
    expect(m.has('n2')).toBe(false);
  });

  it('fills busy cores with what is known, the rest at the unknown guess', () => {
    expect(busyTimes([1, 2], 3, 9)).toEqual([1, 2, 9]);
    expect(busyTimes([1, 2, 3], 2, 9)).toEqual([1, 2]);
    expect(busyTimes(undefined, 2, 9)).toEqual([9, 9]);
  });
});

describe('the in-memory batch system', () => {
  it('reports the jobs it started with their node and start time, and forgets those that finished', async () => {
    const b = new MemoryBatch([]);
    let now = NOW;
    b.now = () => now;
    b.nodesByName.set('es-1', { cpus: 2, memoryMb: 1000, alloc: 0, state: 'available' });
    b.pending = [{ id: '1', partition: 'p', cpus: 1, memoryMb: 0, constraints: [], inputs: [], submittedAt: 0, reason: '', user: 'ana', name: 'reco', timeLimitMs: H }];
    b.schedule();
    now += 60_000;
    b.pending = [{ id: '2', partition: 'p', cpus: 1, memoryMb: 0, constraints: [], inputs: [], submittedAt: 0, reason: '' }];
    b.schedule();
    expect((await b.queue('es-')).running).toEqual([
      { node: 'es-1', cpus: 1, partition: 'p', user: 'ana', name: 'reco', timeLimitMs: H, startedAt: NOW },
      { node: 'es-1', cpus: 1, partition: 'p', startedAt: NOW + 60_000 },
    ]);
    b.finish('es-1', 1);
    expect((await b.queue('es-')).running?.map((j) => j.startedAt)).toEqual([NOW + 60_000]);
  });
});
