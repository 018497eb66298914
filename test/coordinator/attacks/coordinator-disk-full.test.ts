// A full disk under the registry's directory. Persist-then-act holds (nothing is started that
// could not be written), but the coordinator then does nothing at all, and must say so: "a daemon
// that cannot do its job exits 2 with one line, or says so on its page and in /metrics".

import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { fakeSlurm, pendingJob, sleep, startCoordinator } from './coordinator-fake-slurm.ts';

afterAll(runTeardowns);

test('a registry on a full disk is reported on the status API or /metrics, not hidden behind the last good interval', async () => {
  const slurm = fakeSlurm();
  const mnt = join(slurm.dir, 'tfs');
  mkdirSync(mnt);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mnt]);
  onTeardown(() => {
    execFileSync('umount', ['-l', mnt]);
  });
  const c2 = await startCoordinator(
    slurm,
    `    cloud:
      adapter: command
      quota: 3
      machine-types: [small]
      command: {start: "echo ID=1", stop: "true", status: "echo booting", timeout: 5s}
`,
    '',
    'c',
    join(mnt, 'state'),
  );
  await sleep(2000);
  // Fill the file system, then give the coordinator work.
  try {
    execFileSync('dd', ['if=/dev/zero', `of=${join(mnt, 'filler')}`, 'bs=4k'], { stdio: 'ignore' });
  } catch {
    // dd ends with ENOSPC, as intended
  }
  slurm.setJobs([pendingJob(601), pendingJob(602)]);
  await sleep(5000);
  const status = await c2.status();
  const metrics = (await (await fetch(`${c2.url}/metrics`)).text()).split('\n').filter((l) => !l.startsWith('#')).join('\n');
  expect(c2.child.output()).toMatch(/disk is full/);
  expect(`${JSON.stringify(status)}\n${metrics}`, JSON.stringify(status).slice(0, 400)).toMatch(/disk is full|ENOSPC|SQLITE_FULL|registry[^\n]*(fail|error|cannot)/i);
}, 40_000);
