// The coordinator page's chart and what it plots: tick labels are the round numbers they stand
// for (no 0.6000000000000001), job counts tick in whole jobs, and a COMPLETING job still counts as
// running where it runs, so the cloud's line does not drop to 0 between short jobs.

import { describe, expect, it } from 'vitest';
import { parseQueue } from '../../coordinator/batch/slurm-parse.ts';
import { step, ticks, timelineSvg } from '../../coordinator/status/timeline-svg.ts';

const labels = (svg: string, anchor: 'end' | 'middle') =>
  [...svg.matchAll(new RegExp(`text-anchor="${anchor}">([\\d.]+)<`, 'g'))].map((m) => m[1]!);

describe('the timeline chart', () => {
  it('labels ticks with round numbers, jobs in whole ones', () => {
    expect(ticks(1, 0.2)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(step(1, 5, 1)).toBe(1);
    expect(step(40, 5, 1)).toBe(10);
    const svg = timelineSvg([
      { at: 0, pending: 1, home: 0, drones: 0, live: 0 },
      { at: 2500, pending: 0, home: 1, drones: 1, live: 1 },
    ]);
    expect(labels(svg, 'end')).toEqual(['0', '1']);
    expect(labels(svg, 'middle')).toEqual(['0', '0.5', '1', '1.5', '2', '2.5']);
  });
});

describe('squeue --json, running jobs', () => {
  it('counts a COMPLETING job where it runs', () => {
    const job = (id: number, state: string, nodes: string) => ({ job_id: id, job_state: state, partition: 'hybrid', nodes });
    const q = parseQueue(
      JSON.stringify({ jobs: [job(1, 'COMPLETING', 'es-aws-1'), job(2, 'RUNNING', 'es-aws-2'), job(3, 'COMPLETING', 'node01')] }),
      ['hybrid'],
      'es-',
    );
    expect(q.runningOnDrones).toBe(2);
    expect(q.runningAtHome).toBe(1);
  });
});
