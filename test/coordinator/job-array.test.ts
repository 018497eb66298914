// Job arrays counted as their tasks: the task-string forms squeue prints, the `%` throttle less
// the running tasks, and the expansion in the queue parser.

import { describe, expect, it } from 'vitest';
import { parseArrayTasks, runnableTasks } from '../../coordinator/batch/job-array.ts';
import { parsePending } from '../../coordinator/batch/slurm-parse.ts';

describe('array task strings', () => {
  it.each([
    ['1-4', [1, 2, 3, 4], 4, undefined],
    ['1,3,5-9', [1, 3, 5, 6, 7, 8, 9], 7, undefined],
    ['1-9:2', [1, 3, 5, 7, 9], 5, undefined],
    ['0-8:4,20', [0, 4, 8, 20], 4, undefined],
    ['7', [7], 1, undefined],
    ['1-1000%10', undefined, 1000, 10],
  ])('%s', (text, indices, count, throttle) => {
    const t = parseArrayTasks(text)!;
    if (indices) expect(t.indices).toEqual(indices);
    expect(t.count).toBe(count);
    expect(t.throttle).toBe(throttle);
  });

  it('lists at most `limit` indices but counts them all', () => {
    const t = parseArrayTasks('1-1000000', 3)!;
    expect(t).toEqual({ indices: [1, 2, 3], count: 1_000_000 });
  });

  it('refuses what is not an array task string', () => {
    for (const bad of ['', 'a-b', '5-1', '1-4:0', '1-4%x', '1,,2']) expect(parseArrayTasks(bad)).toBeUndefined();
  });

  it('a throttle leaves room for its limit less the running tasks', () => {
    expect(runnableTasks(parseArrayTasks('1-1000%10')!, 0)).toBe(10);
    expect(runnableTasks(parseArrayTasks('1-1000%10')!, 7)).toBe(3);
    expect(runnableTasks(parseArrayTasks('5-6%10')!, 3)).toBe(2);
    expect(runnableTasks(parseArrayTasks('1-1000%10')!, 12)).toBe(0);
    expect(runnableTasks(parseArrayTasks('1-8')!, 5)).toBe(8);
  });
});

describe('squeue --json with arrays', () => {
  const rec = (o: object) => ({ job_id: 40, job_state: 'PENDING', state_reason: 'Resources', partition: 'hybrid', cpus: 1, memory_per_cpu: 100, ...o });
  it('counts each pending task, up to the throttle less the running tasks', () => {
    const text = JSON.stringify({
      jobs: [
        rec({ job_id: 40, array_job_id: 40, array_task_string: '1-8', array_max_tasks: 0 }),
        rec({ job_id: 50, array_job_id: 50, array_task_string: '3-1000%10', array_max_tasks: 10 }),
        rec({ job_id: 51, array_job_id: 50, array_task_id: 1, job_state: 'RUNNING', nodes: 'home1' }),
        rec({ job_id: 52, array_job_id: 50, array_task_id: 2, job_state: 'RUNNING', nodes: 'home1' }),
        rec({ job_id: 60, array_job_id: 60, array_task_string: '1-9:2', array_max_tasks: 2 }),
        rec({ job_id: 70 }),
      ],
    });
    const ids = parsePending(text, ['hybrid']).map((j) => j.id);
    expect(ids.filter((i) => i.startsWith('40_'))).toEqual(['40_1', '40_2', '40_3', '40_4', '40_5', '40_6', '40_7', '40_8']);
    expect(ids.filter((i) => i.startsWith('50_'))).toEqual(['50_3', '50_4', '50_5', '50_6', '50_7', '50_8', '50_9', '50_10']);
    expect(ids.filter((i) => i.startsWith('60_'))).toEqual(['60_1', '60_3']);
    expect(ids).toContain('70');
    expect(ids).toHaveLength(8 + 8 + 2 + 1);
  });
});

it('a list squeue cut short with "..." counts the items before the cut, never a split one', () => {
  expect(parseArrayTasks('1,5,7,...')?.indices).toEqual([1, 5, 7]);
  expect(parseArrayTasks('1,5,7,6...')?.indices).toEqual([1, 5, 7]);
  expect(parseArrayTasks('1,5,7,...%5')).toMatchObject({ count: 3, throttle: 5 });
  expect(parseArrayTasks('12...')).toBeUndefined();
});
