// One contract, every batch-system adapter: the in-memory one the unit tests use and Slurm on a
// real cluster must behave alike where the coordinator depends on it.

import { describe, expect, it } from 'vitest';
import { MemoryBatch } from '../../coordinator/batch/memory.ts';
import { SlurmBatch } from '../../coordinator/batch/slurm.ts';
import type { BatchSystem } from '../../coordinator/batch/types.ts';
import { VirtualClock } from '../../coordinator/clock.ts';
import { batchSystemSchema, netnsSiteSchema } from '../../coordinator/config.ts';
import { MemorySite } from '../../coordinator/sites/memory.ts';
import { NetnsSite } from '../../coordinator/sites/netns.ts';
import { onTeardown } from '../helpers/cleanup.ts';
import { startSlurmCluster } from './helpers/slurm-cluster.ts';

interface Harness {
  readonly batch: BatchSystem;
  readonly prefix: string;
  /** Starts a worker that registers a node of 2 CPUs named id. */
  addNode(id: string): Promise<void>;
  /** Queues a 1-CPU job that only a drone can run; returns its id. */
  submit(): Promise<string>;
  cancel(id: string): Promise<void>;
}

async function eventually<T>(f: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 150));
  }
}

function batchContract(name: string, make: () => Promise<Harness>) {
  describe(`batch-system contract: ${name}`, () => {
    // First, while no node exists: the jobs must stay pending to be steered.
    it('steers pending jobs with a feature requirement, lifts it, and skips jobs that left', async () => {
      const h = await make();
      const [a, b, gone] = [await h.submit(), await h.submit(), await h.submit()];
      await h.cancel(gone);
      const constraints = async (id: string) => (await h.batch.queue(h.prefix)).pending.find((j) => j.id === id)?.constraints;
      await eventually(async () => ((await constraints(b)) ? true : undefined));
      await h.batch.steer([a, gone, b], 'site_s');
      expect(await constraints(a)).toEqual([['site_s']]);
      expect(await constraints(b)).toEqual([['site_s']]);
      await h.batch.steer([a], '');
      expect(await constraints(a)).toEqual([]);
      await h.cancel(a);
      await h.cancel(b);
    });

    it('reports pending demand, and nodes under the prefix only', async () => {
      const h = await make();
      const job = await h.submit();
      const pending = await eventually(async () => {
        const p = (await h.batch.queue(h.prefix)).pending;
        return p.some((j) => j.id === job) ? p : undefined;
      });
      expect(pending.find((j) => j.id === job)).toMatchObject({ cpus: 1, constraints: [['cloud']] });
      await h.cancel(job);
      await h.addNode(`${h.prefix}n-1`);
      const nodes = await eventually(async () => {
        const n = await h.batch.nodes(h.prefix);
        return n.get(`${h.prefix}n-1`)?.status === 'available' ? n : undefined;
      });
      expect([...nodes.keys()]).toEqual([`${h.prefix}n-1`]);
      expect(nodes.get(`${h.prefix}n-1`)).toMatchObject({ cpus: 2, allocCpus: 0 });
      expect((await h.batch.nodes('nobody-')).size).toBe(0);
    });

    it('integrates, drains and removes a node; each step idempotent', async () => {
      const h = await make();
      const id = `${h.prefix}n-2`;
      await h.addNode(id);
      await eventually(async () => ((await h.batch.nodes(h.prefix)).get(id)?.status === 'available' ? true : undefined));
      await h.batch.integrate(id, 'estuary test');
      await h.batch.drain(id, 'test');
      await h.batch.drain(id, 'test');
      expect((await h.batch.nodes(h.prefix)).get(id)?.status).toBe('drained');
      await h.batch.remove(id, false);
      await h.batch.remove(id, false);
      await h.batch.drain(id, 'gone');
      expect((await h.batch.nodes(h.prefix)).has(id)).toBe(false);
    });

    it('removes a lost node at once', async () => {
      const h = await make();
      const id = `${h.prefix}n-3`;
      await h.addNode(id);
      await eventually(async () => ((await h.batch.nodes(h.prefix)).has(id) ? true : undefined));
      await h.batch.remove(id, true);
      expect((await h.batch.nodes(h.prefix)).has(id)).toBe(false);
    });
  });
}

batchContract('memory', async () => {
  const clock = new VirtualClock();
  const site = new MemorySite('s', clock, 0);
  const batch = new MemoryBatch([site]);
  let n = 0;
  return {
    batch,
    prefix: 'm-',
    async addNode(id) {
      await site.deploy({ id, site: 's', machineType: 't', cores: 2, memoryMb: 1000, features: [] });
      await site.status(id);
    },
    async submit() {
      const id = `job${++n}`;
      batch.pending.push({ id, partition: 'hybrid', cpus: 1, memoryMb: 100, constraints: [['cloud']], inputs: [], submittedAt: 0, reason: 'Resources' });
      return id;
    },
    async cancel(id) {
      batch.pending = batch.pending.filter((j) => j.id !== id);
    },
  };
});

const features = ['estuary', 'site_s', 'type_t', 'cloud'];
let slurm: Promise<Harness> | undefined;
batchContract('slurm', () => {
  slurm ??= (async () => {
    const cluster = await startSlurmCluster({ homeNodes: 0, droneFeatures: features, droneCpus: 2 });
    const prefix = `k${process.pid}-`;
    const site = new NetnsSite(
      's',
      netnsSiteSchema.parse({ bridge: cluster.bridge, subnet: cluster.subnet, gateway: cluster.gateway, slurmConf: cluster.conf, runDir: `${cluster.dir}/drones` }),
    );
    onTeardown(async () => {
      for (const id of await site.list(prefix)) await site.stop(id);
    });
    const batch = new SlurmBatch(batchSystemSchema.parse({ type: 'slurm', partitions: ['hybrid'], slurmConf: cluster.conf }) as never);
    return {
      batch,
      prefix,
      async addNode(id) {
        await site.deploy({ id, site: 's', machineType: 't', cores: 2, memoryMb: 1000, features });
      },
      submit: () => cluster.sbatch(['-o', '/dev/null', '--constraint=cloud', '--hold', '--wrap', 'true']).then(async (id) => {
        // Held jobs are not demand; release it now that it has its id, so nothing runs before
        // the test looks (no node has the feature yet).
        await cluster.slurm('scontrol', ['release', id]);
        return id;
      }),
      async cancel(id) {
        await cluster.slurm('scancel', [id]);
      },
    };
  })();
  return slurm;
});
