// A real Slurm 22.05 cluster writing its job completion log (jobcomp/filetxt). `scontrol requeue`
// of a batch job that completed runs it again under the same job id, and slurmctld writes a
// second COMPLETED record of that id. The coordinator's rule (docs/COORDINATOR.md, "Run times"):
// "two finished records of one id ... are all skipped", and followed reads must learn what a read
// of the whole file learns — "a second finished record of a job id read an hour before skips both".
// When the coordinator read the first record before the requeue (every `history-every`, the usual
// case), that job stays learned: the followed run times differ from the whole file's.
//
// Expected: after the requeued job's second record, the coordinator's run times equal those of a
// coordinator that reads the whole log once (the requeued job learned from neither record).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, expect, test } from 'vitest';
import { SlurmBatch } from '../../../coordinator/batch/slurm.ts';
import { VirtualClock } from '../../../coordinator/clock.ts';
import { RunHistory } from '../../../coordinator/run-history.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startSlurmCluster, type SlurmCluster } from '../helpers/slurm-cluster.ts';

afterAll(runTeardowns);

const EVERY = 60_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function completedRecords(log: string, id: string, n: number): Promise<void> {
  for (let i = 0; i < 120; i++) {
    const lines = readFileSync(log, 'utf8').split('\n').filter((l) => l.startsWith(`JobId=${id} `) && l.includes(' JobState=COMPLETED '));
    if (lines.length >= n) return;
    await sleep(250);
  }
  throw new Error(`no ${n} COMPLETED records of job ${id} in ${log}:\n${readFileSync(log, "utf8")}`);
}

function coordinator(cluster: SlurmCluster): { history: RunHistory; clock: VirtualClock } {
  const batch = new SlurmBatch({ type: 'slurm', partitions: [cluster.partition], slurmConf: cluster.conf, timeout: 10_000, history: 'completion', historyEvery: EVERY });
  const clock = new VirtualClock();
  return { history: new RunHistory(batch, clock, pino({ level: 'silent' }), EVERY), clock };
}

test('a job requeued after it completed is learned from neither of its two records', async () => {
  const cluster = await startSlurmCluster({ homeNodes: 1, homeCpus: 1, droneFeatures: ['estuary', 'cloud'], droneCpus: 1, extraConf: ['JobCompType=jobcomp/filetxt', 'JobCompLoc={dir}/log/jobcomp.log'] });
  const log = join(cluster.dir, 'log', 'jobcomp.log');
  const followed = coordinator(cluster);
  const out = join(cluster.dir, 'out');
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push(await cluster.sbatch(['-J', 'learn', '-o', `${out}/%j.out`, '--wrap', 'sleep 1']));
  for (const id of ids) await completedRecords(log, id, 1);
  await followed.history.refresh();
  expect(followed.history.status.error).toBeNull();
  expect(followed.history.status.jobs).toBe(3);

  const requeue = await cluster.slurm('scontrol', ['requeue', ids[0]!]);
  expect(requeue.code, requeue.stderr).toBe(0);
  // A requeued job waits CredExpire (121 s) before it may start again: let it start now.
  for (let i = 0; i < 40; i++) {
    const r = await cluster.slurm('scontrol', ['update', `jobid=${ids[0]!}`, 'StartTime=now']);
    if (r.code === 0) break;
    await sleep(250);
  }
  await completedRecords(log, ids[0]!, 2);
  followed.clock.advance(EVERY);
  await followed.history.refresh();
  expect(followed.history.status.error).toBeNull();

  const whole = coordinator(cluster);
  await whole.history.refresh();
  expect({ runTimes: Object.fromEntries(followed.history.summary()), jobs: followed.history.status.jobs }).toEqual({
    runTimes: Object.fromEntries(whole.history.summary()),
    jobs: whole.history.status.jobs,
  });
}, 120_000);
