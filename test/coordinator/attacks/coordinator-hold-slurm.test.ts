// `hold: true` on a real Slurm 22.05, set up exactly as docs/COORDINATOR.md ("Holding new jobs for
// placement") tells a site to: "adds the feature `estuary_hold` to every new job of the hybrid
// partition (one line in a `job_submit.lua`: `job_desc.features = "estuary_hold"` when none is
// given). No node carries it, so the job waits; reading the queue, the coordinator ... places the
// job and replaces it with the placement's requirement ... within one interval."
//
// slurmctld validates a job's features after the job_submit plugin ran, and refuses a feature no
// node carries ("Invalid feature specification"): with the documented setup every plain sbatch
// of the partition fails. Expected: the documented setup takes jobs and they run once the
// coordinator has placed them. (If the docs come to require more of slurm.conf, such as a FUTURE
// node carrying estuary_hold, this test's setup follows the docs.)

import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { startCoordinator, waitFor } from '../helpers/coordinator-process.ts';
import { startSlurmCluster, writeCoordinatorConfig } from '../helpers/slurm-cluster.ts';

afterAll(runTeardowns);

const LUA = `function slurm_job_submit(job_desc, part_list, submit_uid)
  if job_desc.features == nil or job_desc.features == '' then
    job_desc.features = "estuary_hold"
  end
  return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
  return slurm.SUCCESS
end
`;

test('a plain job submitted under the documented job_submit.lua is taken, held, and run once placed', async () => {
  const cluster = await startSlurmCluster({ homeNodes: 1, homeCpus: 1, droneFeatures: ['cloud', 'site_cloud', 'type_small'], droneCpus: 2 });
  onTeardown(() => cluster.stop());
  await cluster.killController();
  writeFileSync(join(cluster.dir, 'job_submit.lua'), LUA);
  // docs/COORDINATOR.md: the feature is declared on a FUTURE node, so slurmctld takes the job.
  appendFileSync(cluster.conf, 'JobSubmitPlugins=lua\nNodeName=estuary-hold CPUs=1 RealMemory=100 State=FUTURE Features=estuary_hold\n');
  await cluster.startController();

  const config = writeCoordinatorConfig(cluster, { prefix: 'atkh-', quota: 1, bootTimeout: '60s' });
  appendFileSync(config, '  controller: {type: estuary, hold: true, home-feature: home}\n');
  const coord = await startCoordinator(cluster, config);
  expect(coord.port).toBeGreaterThan(0);

  const r = await cluster.slurm('sbatch', ['--parsable', '-p', 'hybrid', '--output=/dev/null', '--wrap', 'sleep 1']);
  expect(r.stderr.trim(), 'sbatch under the documented job_submit.lua').toBe('');
  expect(r.code).toBe(0);
  const id = r.stdout.trim().split(';')[0]!;
  // Held at submission, then placed at home (free, idle) and run.
  await waitFor(
    `job ${id} to leave the queue`,
    async () => {
      const q = await cluster.slurm('squeue', ['-h', '-j', id, '-o', '%T']);
      return q.stdout.trim() === '' || /COMPLET/.test(q.stdout) ? true : undefined;
    },
    30_000,
  );
}, 60_000);
