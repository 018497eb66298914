// Attack: where the job completion log is, and what the coordinator says about it (real sacct).
//
// 1. `sacct --completion` reads JobCompLoc as a file ON THE HOST IT RUNS ON. The coordinator
//    commonly runs elsewhere than slurmctld (a login or service node sharing slurm.conf): there
//    the file does not exist, sacct -c (as root) CREATES it empty, prints nothing and exits 0, and
//    the coordinator reports "learned from 0 finished jobs (Slurm job completion log (sacct -c))" with no error — forever.
//    docs/COORDINATOR.md, "When there is no history": decisions fall back to time limits "never
//    silently: the status table and the page say `run times: NOT LEARNED: ...`", and
//    `history.error` says why. Expected: a completion log that is not there is an error naming
//    the file (and that sacct -c reads it on this host), not an empty history.
// 2. `history: completion` on a cluster WITH a database (AccountingStorageType=slurmdbd) and
//    JobCompType=jobcomp/none: sacct -c says "Slurm job completion is disabled", and the
//    coordinator's error claims "accounting storage is disabled and job completion is disabled"
//    — the accounting storage is not disabled; the fix is `history: auto`/`accounting` or a
//    completion log. Expected: the error says only what Slurm said (job completion disabled).

import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { SlurmBatch } from '../../../coordinator/batch/slurm.ts';
import { monotonicClock } from '../../../coordinator/clock.ts';
import { RunHistory } from '../../../coordinator/run-history.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';

afterAll(runTeardowns);

function conf(dir: string, lines: readonly string[]): string {
  const file = join(dir, `slurm-${Math.random().toString(36).slice(2)}.conf`);
  writeFileSync(file, ['ClusterName=atk', 'SlurmctldHost=localhost', 'AuthType=auth/none', 'NodeName=n1 CPUs=1', 'PartitionName=hybrid Nodes=n1', ...lines, ''].join('\n'));
  return file;
}

describe('the job completion log as the coordinator\'s host sees it', () => {
  it('a JobCompLoc that does not exist on this host is an error naming it, not "learned from 0 finished jobs"', async () => {
    expect(existsSync('/usr/bin/sacct'), 'slurm-wlm\'s sacct').toBe(true);
    const dir = await tempDir('estuary-atk-sacct2-');
    // Its directory exists here (as /var/log/slurm does on a login node), the file does not.
    const missing = join(dir, 'jobcomp.log');
    const slurmConf = conf(dir, ['AccountingStorageType=accounting_storage/none', 'JobCompType=jobcomp/filetxt', `JobCompLoc=${missing}`]);
    const batch = new SlurmBatch({ type: 'slurm', partitions: ['hybrid'], slurmConf, timeout: 10_000, history: 'auto', historyEvery: 300_000 });
    const history = new RunHistory(batch, monotonicClock(), pino({ level: 'silent' }), 300_000);
    await history.refresh();
    expect(history.status.error, `status: ${JSON.stringify(history.status)}`).not.toBeNull();
    expect(history.status.error).toContain(missing);
    // sacct -c, run as root, even creates the log it did not find: an empty file that reads as
    // "no job finished" on the next read too.
    expect(existsSync(missing), 'no empty completion log left behind').toBe(false);
  });

  it('history: completion on a cluster with a database does not claim its accounting storage is disabled', async () => {
    const dir = await tempDir('estuary-atk-sacct2-');
    const slurmConf = conf(dir, ['AccountingStorageType=accounting_storage/slurmdbd', 'AccountingStorageHost=127.0.0.1', 'JobCompType=jobcomp/none']);
    const batch = new SlurmBatch({ type: 'slurm', partitions: ['hybrid'], slurmConf, timeout: 10_000, history: 'completion', historyEvery: 300_000 });
    const err = await batch.finished(Date.now() - 86_400_000).then(() => undefined, (e: Error) => e);
    expect(err, 'job completion is disabled: the read fails').toBeInstanceOf(Error);
    expect(err!.message).toMatch(/job completion is disabled/i);
    expect(err!.message).not.toMatch(/accounting storage is disabled/i);
  });
});
