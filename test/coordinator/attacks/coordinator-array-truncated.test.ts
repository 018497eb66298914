// Pending job arrays count as their tasks. Slurm 22.05's squeue --json cuts a long
// array_task_string after 64 characters with "..." (SLURM_BITSTR_LEN): an array submitted with
// an explicit list of indices — resubmitting the tasks that failed, the usual way — is printed
// as "1,3,5,...,63,...". Such an array must still count as its tasks (or, with a throttle, as
// the throttle), not as one job.

import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { afterAll, expect, test } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { NODE, startChild } from '../../helpers/process.ts';
import { startSlurmCluster } from '../helpers/slurm-cluster.ts';

afterAll(runTeardowns);

const ROOT = join(import.meta.dirname, '..', '..', '..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('an array of 40 listed indices, printed truncated by squeue, counts as 40 pending jobs', async () => {
  const cluster = await startSlurmCluster({ homeNodes: 1, homeCpus: 1, droneFeatures: ['estuary', 'cloud', 'site_cloud', 'type_small'], droneCpus: 2 });
  const indices = Array.from({ length: 40 }, (_, i) => 1 + i * 3 + (i % 2)).join(',');
  await cluster.sbatch([`--array=${indices}`, '--constraint=cloud', '-o', '/dev/null', '--wrap', 'true']);
  const squeue = await cluster.slurm('squeue', ['--json']);
  const record = (JSON.parse(squeue.stdout) as { jobs: { array_task_string?: string }[] }).jobs[0];
  expect(record?.array_task_string).toContain('...');
  const config = join(cluster.dir, 'atk-coordinator.yaml');
  writeFileSync(
    config,
    `coordinator:
  listen: 127.0.0.1:0
  state-dir: ${cluster.dir}/atk-state
  interval: 1s
  prefix: at${process.pid % 1000}-
  batch-system: {type: slurm, partitions: [hybrid], slurm-conf: ${cluster.conf}}
  machine-types:
    small: {cores: 2, memory: 1000MiB, features: [cloud]}
  sites:
    cloud:
      adapter: command
      quota: 1
      machine-types: [small]
      command: {start: "echo ID=1", stop: "true", status: "echo booting", timeout: 5s}
`,
  );
  const c = startChild(NODE, [join(ROOT, 'bin', 'estuary.js'), 'coordinator', '--config', config, '--log-format', 'json'], { cwd: ROOT, env: { ...process.env, ...cluster.env } });
  const m = await c.waitFor(/"port":(\d+)[^\n]*coordinator listening/, 20_000);
  let pending = -1;
  for (let i = 0; i < 20 && pending <= 0; i++) {
    await sleep(500);
    const s = (await (await fetch(`http://127.0.0.1:${m[1]}/api/v1/status`)).json()) as { pendingJobs: number };
    pending = s.pendingJobs;
  }
  expect(pending, `squeue printed ${JSON.stringify(record?.array_task_string)}`).toBe(40);
}, 60_000);
