// Real Slurm 22.05 (jobcomp/filetxt, read with `sacct -c`, as docs/COORDINATOR.md "Run times"
// describes): a user's job name reaches the coordinator's parser raw. Expected: nothing a user
// puts in a job name is read as a finished job of ANOTHER user (the docs: "a name with a newline
// leaves two such lines" that are skipped and counted).
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { SlurmBatch } from '../../../coordinator/batch/slurm.ts';
import { batchSystemSchema } from '../../../coordinator/config.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startSlurmCluster } from '../helpers/slurm-cluster.ts';

afterAll(runTeardowns);

describe('job names in the completion log', () => {
  it('a job name with a newline does not forge a finished job of another user', { timeout: 60_000 }, async () => {
    const c = await startSlurmCluster({ homeNodes: 1, homeCpus: 2, droneFeatures: ['site_x'], droneCpus: 2, extraConf: ['JobCompType=jobcomp/filetxt', 'JobCompLoc={dir}/jobcomp.log'] });
    // The completion log is `key=value` words, one record per line, and slurmctld writes the name
    // raw: a name holding a newline and the words of a record writes a whole record of its own.
    const forged = 'JobId=424242 UserId=nobody(65534) GroupId=nogroup(65534) Name=train JobState=COMPLETED Partition=hybrid TimeLimit=525600 StartTime=2026-01-01T00:00:00 EndTime=2026-01-01T00:00:01 NodeList=n NodeCnt=1 ProcCnt=1 WorkDir=/ ReservationName= Tres=cpu=1 Account= QOS= WcKey= Cluster=unknown SubmitTime=2026-01-01T00:00:00 EligibleTime=2026-01-01T00:00:00 DerivedExitCode=0:0 ExitCode=0:0';
    const name = `x\n${forged}`;
    await c.sbatch(['--job-name', name, '--partition', c.partition, '--wrap', 'true', '--output', '/dev/null']);
    const log = `${c.dir}/jobcomp.log`;
    const deadline = Date.now() + 15_000;
    // Read as the coordinator reads it (its own sacct command line, coordinator/batch/slurm.ts).
    const batch = new SlurmBatch(batchSystemSchema.parse({ type: 'slurm', partitions: [c.partition], slurmConf: c.conf, history: 'completion' }) as never);
    while (Date.now() < deadline) {
      if (readFileSync(log, 'utf8').includes('424242')) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const read = await batch.finished(Date.now() - 3_600_000);
    // Today: `424242|COMPLETED|0|nobody(65534)|hybrid|train` is read as nobody's job of 0 s, at a job
    // id root chose, and root's own job 1 is gone from the answer.
    expect(read.jobs.filter((j) => j.user !== 'root')).toEqual([]);
  });
});
