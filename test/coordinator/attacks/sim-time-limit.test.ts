// Attack: `estuary coordinator simulate` with a trace whose jobs run past their time limit (the
// Parallel Workloads Archive's logs hold such jobs: run time, field 4, above requested time,
// field 9; a JSON trace can say `runtime: 7200, timeLimit: 600`). docs/BENCHMARKING.md, "Trace
// formats": field 9 / `timeLimit` is "the job's time limit, as `--time`", and the simulator is "a
// simulated Slurm" (docs/COORDINATOR.md, "Simulation"). Slurm ends a job at its --time (state
// TIMEOUT, which run-time learning counts as a run of its limit). The simulator lets it run its
// whole trace run time: a 10-minute-limit job runs 2 h, while the policy, which caps every
// estimate at the time limit (run-times.ts), plans it as 10 minutes — the simulated world and
// the policy disagree exactly where learned run times matter.
//
// Expected: the simulated Slurm ends a job at its time limit (or the trace is refused with one
// line naming the job); a lone job of 10 minutes' limit does not hold the makespan at 2 h.

import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { NODE } from '../../helpers/process.ts';
import { tempDir } from '../../helpers/tmp.ts';

afterAll(runTeardowns);

const ROOT = join(import.meta.dirname, '..', '..', '..');

describe('simulate: jobs that overrun their time limit', () => {
  it('a job with runtime 7200 s and timeLimit 600 s is ended at its limit, as Slurm ends it', async () => {
    const dir = await tempDir('estuary-atk-sacct2-');
    writeFileSync(join(dir, 'overrun.json'), JSON.stringify([{ submit: 0, runtime: 7200, timeLimit: 600, user: 'alice', name: 'train' }]));
    writeFileSync(
      join(dir, 'overrun.yaml'),
      `name: overrun
description: a job that runs past its time limit
trace: overrun.json
home: { nodes: 1, cores: 1, memory-mb: 64000, feature: home, at: gpfs }
interval: 30s
idle-time: 10m
max-time: 2d
machine-types:
  c5xl: { cores: 4, memory: 8GiB }
storage:
  gpfs: { urls: ["/gpfs/"] }
sites:
  aws:
    quota: 0
    machine-types: [c5xl]
    cost-per-core-hour: 0.0535
    sim: { boot: 2m, boot-jitter: 0s, api-error-rate: 0 }
controller: {type: estuary}
`,
    );
    const run = promisify(execFile)(NODE, [join(ROOT, 'bin', 'estuary.js'), 'coordinator', 'simulate', join(dir, 'overrun.yaml'), '--json'], { cwd: ROOT, maxBuffer: 64 << 20 });
    const out = await run.then(
      (r) => ({ ok: true as const, stdout: r.stdout }),
      (e: { stderr?: string }) => ({ ok: false as const, stderr: e.stderr ?? '' }),
    );
    if (!out.ok) {
      // Refusing the trace is the other answer: one line, naming the job and the two fields.
      expect(out.stderr.trim().split('\n')).toHaveLength(1);
      expect(out.stderr).toMatch(/job 0.*time ?limit|time ?limit.*job 0/i);
      return;
    }
    const r = JSON.parse(out.stdout) as { finished: number; makespanS: number };
    expect(r.finished).toBe(1);
    // Killed at 600 s (Slurm's OverTimeLimit grace is 0 by default), plus at most an interval.
    expect(r.makespanS).toBeLessThanOrEqual(630);
  }, 30_000);
});
