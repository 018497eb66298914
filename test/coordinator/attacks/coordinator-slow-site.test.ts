// A site's failure is bounded and never delays another site — also at start-up, when every
// site's instances are listed to find orphans.

import { afterAll, expect, test } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { fakeSlurm, pendingJob, sleep, startCoordinator } from './coordinator-fake-slurm.ts';

afterAll(runTeardowns);

test('a site whose list hangs does not keep another site from starting a drone', async () => {
  const slurm = fakeSlurm();
  slurm.setJobs([pendingJob(801)]);
  const started = Date.now();
  const c = await Promise.race([
    startCoordinator(
      slurm,
      `    slow:
      adapter: command
      quota: 1
      machine-types: [small]
      command: {start: "echo ID=1", stop: "true", status: "echo booting", list: "exec sleep 25", timeout: 40s}
    fast:
      adapter: command
      quota: 1
      machine-types: [small]
      command: {start: "echo ID=1", stop: "true", status: "echo booting", timeout: 5s}
`,
    ),
    sleep(8000).then(() => undefined),
  ]);
  expect(c, 'the status API was not up 8 s after start while one site lists for 25 s').toBeDefined();
  let drones = 0;
  while (Date.now() - started < 10_000 && drones === 0) {
    await sleep(500);
    drones = ((await c!.status()).drones as unknown[]).length;
  }
  expect(drones, c!.child.output().slice(-800)).toBeGreaterThan(0);
}, 40_000);
