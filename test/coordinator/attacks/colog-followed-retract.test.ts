// The completion log is followed: each read takes only what slurmctld wrote since the last one.
// docs/COORDINATOR.md ("Run times") promises that this changes nothing in what is learned: "The
// jobs learned and the records skipped are those of a read of the whole file: the job ids, each
// user's uids and a cut record (below) carry over from read to read, so a second finished record
// of a job id read an hour before skips both". A read of the whole file skips every record of a
// job id written twice, and every record of a user name written with two uids. Followed, the first
// record was already handed to the run-time history by the earlier read, and nothing takes it back:
// the run times learned differ from a read of the whole file (a forged record under a victim's
// name and the job id the victim's next job will get is learned, and the victim's real record,
// which should cancel it, only adds to the skipped count).
//
// Expected: after the followed reads, the run times (and the count of jobs learned) are those of
// one read of the whole file by a freshly started coordinator.

import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, expect, test } from 'vitest';
import { SlurmBatch } from '../../../coordinator/batch/slurm.ts';
import { VirtualClock } from '../../../coordinator/clock.ts';
import { RunHistory } from '../../../coordinator/run-history.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';

afterAll(runTeardowns);

const EVERY = 60_000;

function record(id: number, user: string, uid: number, name: string, minutes: number): string {
  const end = `2026-11-20T10:${String(minutes).padStart(2, '0')}:00`;
  return (
    `JobId=${id} UserId=${user}(${uid}) GroupId=${user}(${uid}) Name=${name} JobState=COMPLETED Partition=hybrid TimeLimit=60 ` +
    `StartTime=2026-11-20T10:00:00 EndTime=${end} NodeList=n1 NodeCnt=1 ProcCnt=1 WorkDir=/home/${user} ReservationName= ` +
    `Tres=cpu=1,mem=100M,node=1,billing=1 Account= QOS=normal WcKey= Cluster=cluster SubmitTime=2026-11-20T09:59:00 ` +
    `EligibleTime=2026-11-20T09:59:00 DerivedExitCode=0:0 ExitCode=0:0\n`
  );
}

function cluster(): { conf: string; log: string } {
  const dir = mkdtempSync(join(tmpdir(), 'estuary-atk-colog-'));
  onTeardown(() => rmSync(dir, { recursive: true, force: true }));
  const log = join(dir, 'jobcomp.log');
  const conf = join(dir, 'slurm.conf');
  writeFileSync(conf, `ClusterName=cluster\nJobCompType=jobcomp/filetxt\nJobCompLoc=${log}\n`);
  writeFileSync(log, '');
  return { conf, log };
}

function coordinator(conf: string): { history: RunHistory; clock: VirtualClock } {
  const batch = new SlurmBatch({ type: 'slurm', partitions: ['hybrid'], slurmConf: conf, timeout: 5000, history: 'completion', historyEvery: EVERY });
  const clock = new VirtualClock();
  return { history: new RunHistory(batch, clock, pino({ level: 'silent' }), EVERY), clock };
}

async function readAgain(c: { history: RunHistory; clock: VirtualClock }): Promise<void> {
  c.clock.advance(EVERY);
  await c.history.refresh();
}

/** What a coordinator started now learns from the whole file, read once. */
async function wholeRead(conf: string): Promise<{ runTimes: Record<string, unknown>; jobs: number }> {
  const fresh = coordinator(conf);
  await fresh.history.refresh();
  return { runTimes: Object.fromEntries(fresh.history.summary()), jobs: fresh.history.status.jobs };
}

test('a second record of a job id read two reads earlier takes the first back out of the run times', async () => {
  const { conf, log } = cluster();
  const followed = coordinator(conf);
  // A forged record: alice's name and job id 103, the id alice's next job gets, a 59-minute run.
  writeFileSync(log, record(101, 'alice', 1001, 'learn', 10) + record(102, 'alice', 1001, 'learn', 10) + record(103, 'alice', 1001, 'learn', 59));
  await followed.history.refresh();
  appendFileSync(log, record(104, 'alice', 1001, 'learn', 10));
  await readAgain(followed);
  // alice's real job 103 ends: the log now holds two records of 103, and both must be skipped.
  appendFileSync(log, record(103, 'alice', 1001, 'learn', 10));
  await readAgain(followed);
  expect(followed.history.status.error).toBeNull();

  const whole = await wholeRead(conf);
  expect(whole.runTimes['alice\nhybrid\nlearn']).toEqual({ ms: 600_000, jobs: 3 });
  expect({ runTimes: Object.fromEntries(followed.history.summary()), jobs: followed.history.status.jobs }).toEqual(whole);
  expect(followed.history.status.skipped).toBe(2);
});

test('a user name read with a second uid in a later read takes that user\'s earlier jobs out of the run times', async () => {
  const { conf, log } = cluster();
  const followed = coordinator(conf);
  writeFileSync(log, record(201, 'alice', 1001, 'learn', 10) + record(202, 'alice', 1001, 'learn', 10) + record(203, 'alice', 1001, 'learn', 10) + record(204, 'bob', 1002, 'sim', 20));
  await followed.history.refresh();
  appendFileSync(log, record(205, 'bob', 1002, 'sim', 20));
  await readAgain(followed);
  // The same user name with another uid: a read of the whole file skips every record of alice.
  appendFileSync(log, record(206, 'alice', 4242, 'learn', 30));
  await readAgain(followed);
  expect(followed.history.status.error).toBeNull();

  const whole = await wholeRead(conf);
  expect(Object.keys(whole.runTimes).some((k) => k.startsWith('alice\n'))).toBe(false);
  expect({ runTimes: Object.fromEntries(followed.history.summary()), jobs: followed.history.status.jobs }).toEqual(whole);
});
