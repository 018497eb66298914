// Attack: a job name with SPACES (no newline) forges another user's finished job in the job
// completion log (JobCompType=jobcomp/filetxt), read with `sacct --completion`.
//
// slurmctld writes each record as `JobId=N UserId=u(uid) GroupId=g(gid) Name=<name raw>
// JobState=... Partition=...`, and `sacct -c` splits the line at spaces into key=value words,
// the LAST occurrence of a key winning. JobId and UserId come BEFORE Name, so a job named
// `x UserId=alice(1001) Name=train` is printed by sacct as alice's job `train` — one complete
// record, no newline, so no "cut record" is seen and nothing is skipped.
//
// Expected (docs/COORDINATOR.md, "Run times"): "sacct's text is hostile input (every user names
// their jobs)"; the docs only grant that a name with a space "is cut there" and that a name with
// a NEWLINE can forge records. A name without a newline must not make a finished job of another
// user: the run times learned for alice must come from alice's jobs only.

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SlurmBatch } from '../../../coordinator/batch/slurm.ts';
import { estimateRunTime, RunTimeHistory } from '../../../coordinator/run-times.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { startSlurmCluster } from '../helpers/slurm-cluster.ts';

afterAll(runTeardowns);


/** One record as slurmctld 22.05's jobcomp/filetxt writes it (the name raw, words by spaces). */
function record(id: number, user: string, uid: number, name: string, seconds: number): string {
  const start = '2026-11-24T10:00:00';
  const end = `2026-11-24T10:00:${String(seconds).padStart(2, '0')}`;
  return `JobId=${id} UserId=${user}(${uid}) GroupId=${user}(${uid}) Name=${name} JobState=COMPLETED Partition=hybrid TimeLimit=480 StartTime=${start} EndTime=${end} NodeList=n1 NodeCnt=1 ProcCnt=1 WorkDir=/tmp ReservationName= Tres=cpu=1,mem=100M,node=1,billing=1 Account= QOS= WcKey= Cluster=atk SubmitTime=${start} EligibleTime=${start} DerivedExitCode=0:0 ExitCode=0:0`;
}

describe('completion log: a job name with spaces forges another user (real sacct -c)', () => {
  it('mallory naming three 1 s jobs "x UserId=alice(1001) Name=train" does not make alice\'s 8 h jobs planned as 1 s', async () => {
    expect(existsSync('/usr/bin/sacct'), 'slurm-wlm\'s sacct').toBe(true);
    const dir = await tempDir('estuary-atk-sacct2-');
    const log = join(dir, 'jobcomp.log');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'slurm.conf'),
      ['ClusterName=atk', 'SlurmctldHost=localhost', 'AuthType=auth/none', 'AccountingStorageType=accounting_storage/none', 'JobCompType=jobcomp/filetxt', `JobCompLoc=${log}`, 'NodeName=n1 CPUs=1', 'PartitionName=hybrid Nodes=n1', ''].join('\n'),
    );
    // Three jobs of mallory (uid 1002) of 1 s each; no line has a newline in its name.
    writeFileSync(log, [101, 102, 103].map((id) => record(id, 'mallory', 1002, 'x UserId=alice(1001) Name=train', 1)).join('\n') + '\n');
    const batch = new SlurmBatch({ type: 'slurm', partitions: ['hybrid'], slurmConf: join(dir, 'slurm.conf'), timeout: 10_000, history: 'auto', historyEvery: 300_000 });
    const read = await batch.finished(Date.now() - 86_400_000);
    // Every record is mallory's: none may be alice's.
    expect(read.jobs.map((j) => j.user)).not.toContain('alice');
    const history = new RunTimeHistory();
    history.add(read.jobs);
    const alice = estimateRunTime({ user: 'alice', partition: 'hybrid', name: 'train', timeLimitMs: 8 * 3_600_000 }, history.summary(), 3_600_000);
    // alice never ran a job: her 8 h jobs are timed by their limit, not by mallory's 1 s.
    expect(alice).toEqual({ ms: 8 * 3_600_000, source: 'time limit' });
  });
  it('mallory\'s 1000 space-forged job names of alice do not evict alice\'s own learned run time (the per-user key cap)', async () => {
    // docs, "Run times": "one user's many one-off job names evict only that user's history".
    const dir = await tempDir('estuary-atk-sacct2-');
    const log = join(dir, 'jobcomp.log');
    writeFileSync(
      join(dir, 'slurm.conf'),
      ['ClusterName=atk', 'SlurmctldHost=localhost', 'AuthType=auth/none', 'AccountingStorageType=accounting_storage/none', 'JobCompType=jobcomp/filetxt', `JobCompLoc=${log}`, 'NodeName=n1 CPUs=1', 'PartitionName=hybrid Nodes=n1', ''].join('\n'),
    );
    const alice = [1, 2, 3, 4, 5].map((id) => record(id, 'alice', 1001, 'train', 50));
    const forged = Array.from({ length: 1000 }, (_, i) => record(100 + i, 'mallory', 1002, `x UserId=alice(1001) Name=oneoff${i}`, 1));
    writeFileSync(log, [...alice, ...forged].join('\n') + '\n');
    const batch = new SlurmBatch({ type: 'slurm', partitions: ['hybrid'], slurmConf: join(dir, 'slurm.conf'), timeout: 10_000, history: 'completion', historyEvery: 300_000 });
    const history = new RunTimeHistory();
    history.add((await batch.finished(Date.now() - 86_400_000)).jobs);
    const e = estimateRunTime({ user: 'alice', partition: 'hybrid', name: 'train', timeLimitMs: 8 * 3_600_000 }, history.summary(), 3_600_000);
    expect(e).toEqual({ ms: 50_000, source: 'learned', jobs: 5 });
  });
});

describe('completion log: the same forgery through a real slurmctld (jobcomp/filetxt)', () => {
  it('a job named "x UserId=nobody(65534) Name=train" is not read as a finished job of nobody', async () => {
    const cluster = await startSlurmCluster({
      homeNodes: 1,
      droneFeatures: ['site_a'],
      droneCpus: 1,
      extraConf: ['JobCompType=jobcomp/filetxt', 'JobCompLoc={dir}/jobcomp.log'],
    });
    const forged = await cluster.sbatch(['--job-name=x UserId=nobody(65534) Name=train', '-o', '/dev/null', '--wrap', 'true']);
    const plain = await cluster.sbatch(['--job-name=plain', '-o', '/dev/null', '--wrap', 'true']);
    const batch = new SlurmBatch({ type: 'slurm', partitions: [cluster.partition], slurmConf: cluster.conf, timeout: 15_000, history: 'auto', historyEvery: 300_000 });
    // The log is followed: each read gives the jobs written since the last one (the skipped count
    // is the whole file's), and the two records may come in either order, in two reads.
    let read = await batch.finished(Date.now() - 86_400_000);
    let jobs = [...read.jobs];
    for (let i = 0; i < 60 && jobs.length + read.skipped < 2; i++) {
      await new Promise((r) => setTimeout(r, 250));
      read = await batch.finished(Date.now() - 86_400_000);
      jobs = [...jobs, ...read.jobs];
    }
    read = { ...read, jobs };
    // docs/COORDINATOR.md, "Run times": a record whose name holds slurmctld's own `Key=` words
    // cannot be read unambiguously: it is skipped and counted, never attributed to anyone.
    expect(read.skipped, `job ${forged}'s record is counted as unreadable`).toBe(1);
    expect(read.jobs).toEqual([{ id: plain, user: 'root', partition: cluster.partition, name: 'plain', elapsedMs: expect.any(Number) }]);
    expect(read.jobs.map((j) => j.user)).not.toContain('nobody');
    expect(read.jobs.map((j) => j.id)).not.toContain(forged);
  }, 60_000);
});
