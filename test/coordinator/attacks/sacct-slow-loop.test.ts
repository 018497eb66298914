// sacct against a busy slurmdbd (a week of a busy site's jobs, the first read) can take as long
// as batch-system.timeout. The loop awaits that read inline (coordinator.ts: `await
// this.history?.refresh()`), so every `history-every` the whole control loop — squeue, steering,
// every site's step — stops for as long as sacct takes. Run times are a refinement ("Run times":
// a failed read keeps what was learned); the loop's `interval` is the promise (docs/CONFIGURATION.md
// `--interval`, "time between control-loop intervals"). Expected: a slow sacct costs the loop's
// cadence nothing: squeue is still read every 1 s interval while sacct runs.
import { readFileSync, writeFileSync, chmodSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { fakeSlurm, pendingJob, sleep, startCoordinator } from './coordinator-fake-slurm.ts';

afterAll(runTeardowns);

test('a sacct that takes 4 s does not stall the 1 s control loop', { timeout: 30_000 }, async () => {
  const slurm = fakeSlurm();
  slurm.setJobs([pendingJob(1401)]);
  const calls = join(slurm.dir, 'squeue.calls');
  writeFileSync(join(slurm.bin, 'squeue'), `#!/bin/sh\ndate +%s.%N >> ${calls}\ncat ${slurm.dir}/squeue.json\n`);
  writeFileSync(join(slurm.bin, 'sacct'), `#!/bin/sh\necho called >> ${slurm.dir}/sacct.calls\nsleep 4\n`);
  chmodSync(join(slurm.bin, 'sacct'), 0o755);
  await startCoordinator(
    slurm,
    `    cloud:
      adapter: command
      quota: 2
      machine-types: [small]
      command: {start: "echo ID=1", stop: "true", status: "echo booting", timeout: 5s}
`,
    `  controller: {type: estuary}
`,
  );
  await sleep(4500);
  const n = existsSync(calls) ? readFileSync(calls, 'utf8').split('\n').filter(Boolean).length : 0;
  // Today: 2 (start-up and the first interval read squeue, then the loop waits for sacct).
  expect(existsSync(join(slurm.dir, 'sacct.calls'))).toBe(true);
  expect(n).toBeGreaterThanOrEqual(3);
});
