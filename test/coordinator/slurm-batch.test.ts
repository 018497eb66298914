// The Slurm adapter against a real Slurm 22.05 cluster: demand from pending jobs with their
// partition, CPUs, memory, constraints and declared inputs; a dynamic node that joins, is
// drained, deleted; a lost node whose job Slurm requeues.

import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { SlurmBatch } from '../../coordinator/batch/slurm.ts';
import { batchSystemSchema, netnsSiteSchema } from '../../coordinator/config.ts';
import { NetnsSite } from '../../coordinator/sites/netns.ts';
import type { SiteAdapter } from '../../coordinator/sites/types.ts';
import { startSlurmCluster, type SlurmCluster } from './helpers/slurm-cluster.ts';

const prefix = `b${process.pid}-`;
const features = ['estuary', 'site_cloud', 'type_small', 'cloud'];
let cluster: SlurmCluster;
let batch: SlurmBatch;
let site: SiteAdapter;

beforeAll(async () => {
  cluster = await startSlurmCluster({ homeNodes: 1, homeCpus: 1, droneFeatures: features, droneCpus: 2 });
  batch = new SlurmBatch(batchSystemSchema.parse({ type: 'slurm', partitions: ['hybrid'], slurmConf: cluster.conf }) as never);
  site = new NetnsSite(
    'cloud',
    netnsSiteSchema.parse({ bridge: cluster.bridge, subnet: cluster.subnet, gateway: cluster.gateway, slurmConf: cluster.conf, runDir: `${cluster.dir}/drones` }),
  );
}, 60_000);
afterAll(async () => {
  for (const id of await site.list(prefix)) await site.stop(id, {});
});

const waitFor = async <T>(what: string, f: () => Promise<T | undefined>, ms = 20_000): Promise<T> => {
  const until = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
};

describe('Slurm adapter', () => {
  it('reads pending jobs: partition, CPUs, memory, constraints and declared inputs', async () => {
    const out = `${cluster.dir}/out/%j.out`;
    await cluster.sbatch(['-o', out, '-c', '1', '--wrap', 'sleep 4']); // takes the home node
    const id = await cluster.sbatch([
      '-o', out, '-c', '2', '--mem=300', '--constraint=cloud&site_cloud', '--time=20',
      '--comment', 'run 42 estuary-inputs=s3://kek/run42@40GB,cvmfs://atlas.cern.ch estuary-outputs=250MB', '--wrap', 'sleep 3',
    ]);
    const held = await cluster.sbatch(['-o', out, '-H', '--wrap', 'true']);
    const jobs = await waitFor('pending', async () => {
      const p = (await batch.queue(prefix)).pending;
      return p.some((j) => j.id === id) ? p : undefined;
    });
    const j = jobs.find((x) => x.id === id)!;
    expect(j).toMatchObject({ partition: 'hybrid', cpus: 2, memoryMb: 300, constraints: [['cloud'], ['site_cloud']], timeLimitMs: 1_200_000, outputBytes: 250e6 });
    expect(j.inputs).toEqual([{ url: 's3://kek/run42', bytes: 40e9 }, { url: 'cvmfs://atlas.cern.ch' }]);
    expect(Math.abs(j.submittedAt - Date.now())).toBeLessThan(60_000);
    expect(jobs.map((x) => x.id)).not.toContain(held); // a held job is not demand
    await cluster.slurm('scancel', [held]);
  });

  it('counts a pending job array as its tasks: 8, 1,000, and a throttle less the running tasks', async () => {
    const out = '/dev/null';
    // --constraint=cloud: no drone is up, so every task stays pending.
    const eight = await cluster.sbatch(['-o', out, '--constraint=cloud', '--array=1-8', '--wrap', 'true']);
    const thousand = await cluster.sbatch(['-o', out, '--constraint=cloud', '--array=1-1000', '--wrap', 'true']);
    const throttled = await cluster.sbatch(['-o', out, '--constraint=cloud', '--array=1-1000%10', '--wrap', 'true']);
    const stepped = await cluster.sbatch(['-o', out, '--constraint=cloud', '--array=1-9:2', '--wrap', 'true']);
    // Runs on the home node (one CPU): one task running, the throttle of 2 leaves room for one.
    const home = await cluster.sbatch(['-o', out, '--array=1-4%2', '--wrap', 'sleep 20']);
    const tasks = await waitFor('arrays pending', async () => {
      const p = (await batch.queue(prefix)).pending.map((j) => j.id);
      const of = (id: string) => p.filter((x) => x.startsWith(`${id}_`));
      return of(home).length === 1 && of(eight).length === 8 ? of : undefined;
    });
    expect(tasks(eight)).toHaveLength(8);
    expect(tasks(thousand)).toHaveLength(1000);
    expect(tasks(throttled)).toHaveLength(10);
    expect(tasks(stepped)).toEqual([1, 3, 5, 7, 9].map((i) => `${stepped}_${i}`));
    expect(tasks(home)).toHaveLength(1);
    await cluster.slurm('scancel', [eight, thousand, throttled, stepped, home]);
  });

  it('steers pending jobs to a site with their features, several per call, and lifts it again', async () => {
    const out = `${cluster.dir}/out/%j.out`;
    // Two CPUs: no home node (one CPU) can run them, so they stay pending.
    const a = await cluster.sbatch(['-o', out, '-c', '2', '--wrap', 'true']);
    const b = await cluster.sbatch(['-o', out, '-c', '2', '--wrap', 'true']);
    const gone = await cluster.sbatch(['-o', out, '-c', '2', '--wrap', 'true']);
    await cluster.slurm('scancel', [gone]);
    await batch.steer([a, gone, b], 'site_cloud|home');
    const features = async (id: string) => /Features=(\S*)/.exec((await cluster.slurm('scontrol', ['show', 'job', id])).stdout)?.[1];
    expect(await features(a)).toBe('site_cloud|home');
    expect(await features(b)).toBe('site_cloud|home');
    const pending = (await batch.queue(prefix)).pending;
    expect(pending.find((j) => j.id === a)!.constraints).toEqual([['site_cloud', 'home']]);
    await batch.steer([a], '');
    expect(await features(a)).toBe('(null)');
    expect((await batch.queue(prefix)).pending.find((j) => j.id === a)!.constraints).toEqual([]);
    await cluster.slurm('scancel', [a, b]);
  });

  it('a drone joins as a dynamic node, takes the job, drains, and is deleted', async () => {
    const id = `${prefix}cloud-1`;
    onTestFailed(() => site.stop(id, {}));
    await site.deploy({ id, site: 'cloud', machineType: 'small', cores: 2, memoryMb: 1000, features });
    expect(await site.status(id, {})).toBe('running');
    const node = await waitFor('node', async () => (await batch.nodes(prefix)).get(id));
    expect(node).toMatchObject({ status: 'available', cpus: 2, memoryMb: 1000 });
    // What steering offers as the home alternative: the home node's own feature (the drone and
    // the FUTURE placeholder are not home nodes).
    expect(batch.homeFeatures()).toEqual(['home']);
    await batch.integrate(id, 'estuary cloud/small');
    // The job of the first test, pending for want of a drone, runs on it at once.
    const busy = await waitFor('job on drone', async () => {
      const n = (await batch.nodes(prefix)).get(id);
      return n && n.allocCpus === 2 ? n : undefined;
    }, 10_000);
    expect(busy.status).toBe('available');
    await batch.drain(id, 'estuary: test');
    const drained = await waitFor('drained', async () => {
      const n = (await batch.nodes(prefix)).get(id);
      return n?.status === 'drained' ? n : undefined;
    });
    expect(drained.allocCpus).toBe(0);
    await batch.remove(id, false);
    await batch.remove(id, false); // idempotent
    await batch.drain(id, 'again'); // idempotent on a node that is gone
    expect((await batch.nodes(prefix)).has(id)).toBe(false);
    await site.stop(id, {});
    expect(await site.status(id, {})).toBe('deleted');
  });

  it('refuses to delete a busy node; a lost node is set down and its job requeued', async () => {
    const id = `${prefix}cloud-2`;
    await site.deploy({ id, site: 'cloud', machineType: 'small', cores: 2, memoryMb: 1000, features });
    await waitFor('node', async () => (await batch.nodes(prefix)).get(id));
    const job = await cluster.sbatch(['-o', `${cluster.dir}/out/%j.out`, '--constraint=cloud', '-c', '2', '--wrap', 'sleep 30']);
    await batch.integrate(id, 'x');
    await waitFor('running', async () => ((await batch.nodes(prefix)).get(id)?.allocCpus ? true : undefined));
    await expect(batch.remove(id, false)).rejects.toThrow(/busy/);
    const before = await cluster.slurm('scontrol', ['show', 'job', job]);
    expect(before.stdout).toMatch(/Requeue=1/);
    await site.stop(id, {}); // the instance dies under the job
    await batch.remove(id, true);
    const state = await waitFor('requeue', async () => {
      const r = await cluster.slurm('squeue', ['-h', '-j', job, '-o', '%T %r']);
      return r.stdout.trim().startsWith('PENDING') ? r.stdout.trim().split(' ')[0] : undefined;
    }, 10_000);
    expect(state).toBe('PENDING');
    await cluster.slurm('scancel', [job]);
  });
});
