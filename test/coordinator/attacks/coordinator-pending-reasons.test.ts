// A pending job is demand only when a new drone would let it run. Jobs held back by an
// association or QOS limit (a drone adds cores, not allowance) or that can never start
// (a time limit above the partition's or the QOS's maximum) must start no drone: each one
// would sit idle, be released after idle-time and be started again, for as long as they wait.

import { afterAll, expect, test } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { fakeSlurm, pendingJob, sleep, startCoordinator } from './coordinator-fake-slurm.ts';

afterAll(runTeardowns);

test.each(['AssocMaxJobsLimit', 'AssocGrpCpuLimit', 'QOSMaxCpuPerUserLimit', 'QOSGrpJobsLimit', 'PartitionTimeLimit', 'QOSMaxWallDurationPerJobLimit'])(
  'jobs pending for %s start no drone',
  async (reason) => {
    const slurm = fakeSlurm();
    slurm.setJobs([pendingJob(1301, { state_reason: reason }), pendingJob(1302, { state_reason: reason })]);
    const c = await startCoordinator(
      slurm,
      `    cloud:
      adapter: command
      quota: 2
      machine-types: [small]
      command: {start: "echo ID=1", stop: "true", status: "echo booting", timeout: 5s}
`,
    );
    await sleep(2500);
    const s = await c.status();
    expect((s.drones as unknown[]).length, JSON.stringify(s.pools)).toBe(0);
  },
  20_000,
);
