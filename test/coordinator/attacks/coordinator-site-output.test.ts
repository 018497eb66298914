// A command site's script is a faulty peer: its output is bounded by the coordinator, never by
// the script. One that writes to stderr (or stdout) without end must cost that site one failed
// call, not the coordinator process.

import { afterAll, expect, test } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { fakeSlurm, pendingJob, sleep, startCoordinator } from './coordinator-fake-slurm.ts';

afterAll(runTeardowns);

test('a start script that writes to stderr forever fails its call; the coordinator lives on', async () => {
  const slurm = fakeSlurm();
  slurm.setJobs([pendingJob(101)]);
  const c = await startCoordinator(
    slurm,
    `    cloud:
      adapter: command
      quota: 1
      machine-types: [small]
      command: {start: "exec cat /dev/zero >&2", stop: "true", status: "echo deleted", timeout: 25s}
`,
  );
  await c.child.waitFor(/starting drone/, 10_000);
  // cat /dev/zero fills a JS string past its limit within seconds; the site's timeout is 25 s.
  const exited = await Promise.race([c.child.exited.then((code) => `exited ${code}`), sleep(15_000).then(() => 'alive')]);
  expect(exited, c.child.output().slice(-1500)).toBe('alive');
  const s = await c.status();
  expect(s.batch).toBe('reachable');
}, 40_000);

test('a status script that prints endless stdout fails its call; the coordinator lives on', async () => {
  const slurm = fakeSlurm();
  slurm.setJobs([pendingJob(102)]);
  const c = await startCoordinator(
    slurm,
    `    cloud:
      adapter: command
      quota: 1
      machine-types: [small]
      command: {start: "echo ID=1", stop: "true", status: "exec cat /dev/zero", timeout: 25s}
`,
  );
  await c.child.waitFor(/starting drone/, 10_000);
  const exited = await Promise.race([c.child.exited.then((code) => `exited ${code}`), sleep(15_000).then(() => 'alive')]);
  expect(exited, c.child.output().slice(-1500)).toBe('alive');
}, 40_000);
