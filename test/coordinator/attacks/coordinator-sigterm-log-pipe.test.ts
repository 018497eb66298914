// SIGTERM stops the coordinator within its shutdown-timeout, also when whatever read its log has
// gone away: `estuary coordinator … 2>&1 | head -c 600`, a log collector that exited or restarted.

import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { isAlive, NODE } from '../../helpers/process.ts';
import { fakeSlurm, pendingJob, sleep } from './coordinator-fake-slurm.ts';

afterAll(runTeardowns);

const ROOT = join(import.meta.dirname, '..', '..', '..');

test('SIGTERM stops the coordinator after its log reader went away', async () => {
  const slurm = fakeSlurm();
  slurm.setJobs([pendingJob(301)]);
  const config = join(slurm.dir, 'c.yaml');
  writeFileSync(
    config,
    `coordinator:
  listen: 127.0.0.1:0
  state-dir: ${slurm.dir}/state
  interval: 1s
  prefix: atk-
  shutdown-timeout: 2s
  batch-system: {type: slurm, partitions: [hybrid], bin-dir: ${slurm.bin}, timeout: 5s}
  machine-types:
    small: {cores: 1, memory: 500MiB}
  sites:
    cloud:
      adapter: command
      quota: 1
      machine-types: [small]
      command: {start: "true", stop: "true", status: "echo deleted", timeout: 5s}
`,
  );
  // The inner sh writes its own PID and becomes the coordinator; head leaves after 600 bytes.
  const pidFile = join(slurm.dir, 'pid');
  const inner = `echo $$ > ${pidFile}; exec ${NODE} ${join(ROOT, 'bin', 'estuary.js')} coordinator --config ${config} --log-format json`;
  spawn('/bin/sh', ['-c', `/bin/sh -c '${inner}' 2>&1 | head -c 600 > /dev/null`], { cwd: ROOT, stdio: 'ignore' });
  onTeardown(() => {
    const pid = Number(readFileSync(pidFile, 'utf8'));
    if (pid > 0 && isAlive(pid)) process.kill(pid, 'SIGKILL');
  });
  for (let i = 0; i < 50 && !existsSync(pidFile); i++) await sleep(100);
  await sleep(4000);
  const pid = Number(readFileSync(pidFile, 'utf8'));
  expect(isAlive(pid), 'the coordinator did not start').toBe(true);
  process.kill(pid, 'SIGTERM');
  let r = 'still running 10 s after SIGTERM (shutdown-timeout 2s)';
  for (let i = 0; i < 100; i++) {
    await sleep(100);
    if (!isAlive(pid)) {
      r = 'exited';
      break;
    }
  }
  expect(r).toBe('exited');
}, 30_000);
