// The wall clock can be stepped (NTP's makestep after a VM resumes, an admin's `date -s`). Here
// the step is made inside the coordinator's process only — a preloaded module moves Date.now
// forward an hour on SIGUSR2 — so the machine's clock is left alone. An hour of wall clock that
// did not pass is not an hour of boot: a drone still booting must not be given up for it.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { NODE, startChild } from '../../helpers/process.ts';
import { fakeSlurm, pendingJob, sleep } from './coordinator-fake-slurm.ts';

afterAll(runTeardowns);

const ROOT = join(import.meta.dirname, '..', '..', '..');

test('a one-hour step of the wall clock does not time out a drone that has booted for seconds', async () => {
  const slurm = fakeSlurm();
  slurm.setJobs([pendingJob(901)]);
  const preload = join(slurm.dir, 'step.mjs');
  writeFileSync(
    preload,
    `const real = Date.now; let offset = 0;
process.on('SIGUSR2', () => { offset += 3_600_000; });
Date.now = () => real() + offset;
`,
  );
  const config = join(slurm.dir, 'c.yaml');
  writeFileSync(
    config,
    `coordinator:
  listen: 127.0.0.1:0
  state-dir: ${slurm.dir}/state
  interval: 1s
  boot-timeout: 10m
  prefix: atk-
  batch-system: {type: slurm, partitions: [hybrid], bin-dir: ${slurm.bin}, timeout: 5s}
  machine-types:
    small: {cores: 1, memory: 500MiB}
  sites:
    cloud:
      adapter: command
      quota: 1
      machine-types: [small]
      command: {start: "echo ID=1", stop: "true", status: "echo booting", timeout: 5s}
`,
  );
  const c = startChild(NODE, ['--import', preload, join(ROOT, 'bin', 'estuary.js'), 'coordinator', '--config', config, '--log-format', 'json'], { cwd: ROOT });
  await c.waitFor(/"to":"booting"/, 15_000);
  c.proc.kill('SIGUSR2');
  await sleep(3000);
  expect(c.output(), c.output().split('\n').filter((l) => l.includes('transition')).join('\n')).not.toMatch(/"to":"error"/);
}, 30_000);
