// The Slurm adapter's run-time history and home cores against a real Slurm 22.05 cluster with no
// database: finished jobs from the job completion log (JobCompType=jobcomp/filetxt, `sacct -c`),
// a hostile job name, the error that says so when Slurm keeps no history at all
// (accounting_storage/none and jobcomp/none), and the home node's free cores from sinfo.

import { copyFileSync, readFileSync, renameSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SlurmBatch } from '../../coordinator/batch/slurm.ts';
import { batchSystemSchema } from '../../coordinator/config.ts';
import type { FinishedJob } from '../../coordinator/run-times.ts';
import { runTeardowns } from '../helpers/cleanup.ts';
import { startSlurmCluster, type SlurmCluster } from './helpers/slurm-cluster.ts';

afterAll(runTeardowns);

const prefix = `h${process.pid}-`;
let cluster: SlurmCluster;

const batchFor = (conf: string, history = 'auto') =>
  new SlurmBatch(batchSystemSchema.parse({ type: 'slurm', partitions: ['hybrid'], slurmConf: conf, history }) as never);

const waitFor = async <T>(what: string, f: () => Promise<T | undefined>, ms = 20_000): Promise<T> => {
  const until = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
};

beforeAll(async () => {
  cluster = await startSlurmCluster({
    homeNodes: 1,
    homeCpus: 2,
    droneFeatures: ['estuary', 'cloud'],
    droneCpus: 2,
    extraConf: ['JobCompType=jobcomp/filetxt', 'JobCompLoc={dir}/jobcomp.txt'],
  });
}, 60_000);

describe('Slurm run-time history', () => {
  it('learns finished jobs from the job completion log when there is no database, and reads the home cores', async () => {
    const out = `${cluster.dir}/out/%j.out`;
    const ids = [];
    for (const s of [1, 2, 1]) ids.push(await cluster.sbatch(['-o', out, '-J', 'learn', '-c', '1', '--wrap', `sleep ${s}`]));
    ids.push(await cluster.sbatch(['-o', out, '-J', 'a|b|c', '-c', '1', '--wrap', 'sleep 1']));
    const failed = await cluster.sbatch(['-o', out, '-J', 'learn', '-c', '1', '--wrap', 'false']);
    const busy = await cluster.sbatch(['-o', out, '-J', 'busy', '-c', '1', '--wrap', 'sleep 30']);

    const batch = batchFor(cluster.conf);
    // Each read gives the jobs written since the last one.
    const byId = new Map<string, FinishedJob>();
    const read = await waitFor('finished jobs', async () => {
      const r = await batch.finished(Date.now() - 3_600_000);
      for (const j of r.jobs) byId.set(j.id, j);
      return byId.size >= 4 ? r : undefined;
    }, 30_000);
    expect(read.source).toBe(`Slurm job completion log (${cluster.dir}/jobcomp.txt)`);
    expect([...byId.keys()].sort()).toEqual([...ids].sort()); // the failed job's time says nothing of the work
    expect(byId.has(failed)).toBe(false);
    expect(byId.get(ids[1]!)).toMatchObject({ user: 'root', partition: 'hybrid', name: 'learn' });
    expect(byId.get(ids[1]!)!.elapsedMs).toBeGreaterThanOrEqual(2000);
    expect(byId.get(ids[1]!)!.elapsedMs).toBeLessThanOrEqual(4000);
    // The delimiter in a job name does not shift the fields: the name is the last one.
    expect(byId.get(ids[3]!)).toMatchObject({ user: 'root', partition: 'hybrid', name: 'a|b|c' });

    // The home node (2 cores) runs the 30 s job on one: one idle core, from sinfo.
    // Under load the failed job may still hold its core after the others are learned: wait until
    // the busy job is the only one left, running.
    await waitFor('busy job alone, running', async () => ((await cluster.slurm('squeue', ['-h', '-o', '%i %T'])).stdout.trim() === `${busy} RUNNING` ? true : undefined));
    await batch.nodes(prefix);
    expect(batch.homeCores()).toEqual({ cores: 2, idleCores: 1, nodeCores: 2, nodeMemoryMb: 1000 });
    await cluster.slurm('scancel', [busy]);
  }, 60_000);

  it('reads the completion log from where the last read stopped, and a log rotated by copytruncate or create from its start', async () => {
    const log = `${cluster.dir}/jobcomp.txt`;
    const out = `${cluster.dir}/out/%j.out`;
    const batch = batchFor(cluster.conf);
    const before = (await batch.finished(0)).jobs.length;
    expect(before).toBeGreaterThan(0);
    /** Runs a job and reads until it is learned: the reads that learn it give it alone. */
    const learnOne = async (name: string) => {
      const id = await cluster.sbatch(['-o', out, '-J', name, '-c', '1', '--wrap', 'true']);
      const got: FinishedJob[] = [];
      await waitFor(`job ${id} learned`, async () => {
        got.push(...(await batch.finished(0)).jobs);
        return got.some((j) => j.id === id) ? true : undefined;
      });
      return { id, got };
    };
    const next = await learnOne('next');
    expect(next.got.map((j) => [j.id, j.name])).toEqual([[next.id, 'next']]);
    // logrotate copytruncate: the file is copied away and emptied in place; slurmctld goes on writing to it.
    copyFileSync(log, `${log}.1`);
    truncateSync(log, 0);
    const copied = await learnOne('after-copytruncate');
    expect(copied.got.map((j) => [j.id, j.name])).toEqual([[copied.id, 'after-copytruncate']]);
    // logrotate create: the file is moved away; `scontrol reconfigure` makes slurmctld open a new one.
    renameSync(log, `${log}.2`);
    await cluster.slurm('scontrol', ['reconfigure']);
    const created = await learnOne('after-create');
    expect(created.got.map((j) => [j.id, j.name])).toEqual([[created.id, 'after-create']]);
    expect((await batch.finished(0)).skipped).toBe(0);
  }, 60_000);

  it('says so, and names the settings, when Slurm keeps no job history', async () => {
    const conf = join(cluster.dir, 'no-history.conf');
    writeFileSync(conf, readFileSync(cluster.conf, 'utf8').replace(/^JobComp.*$/gm, ''));
    await expect(batchFor(conf).finished(Date.now() - 3_600_000)).rejects.toThrow(
      /Slurm keeps no job history: accounting storage is disabled and job completion is disabled \(set AccountingStorageType=accounting_storage\/slurmdbd, or JobCompType=jobcomp\/filetxt/,
    );
    // Asked for the database only, sacct's own words.
    await expect(batchFor(conf, 'accounting').finished(Date.now() - 3_600_000)).rejects.toThrow(/accounting storage is disabled/);
  }, 30_000);
});
