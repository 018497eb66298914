// Forging the job completion log (jobcomp/filetxt) through fields the parser does not guard.
// slurmctld 22.05 (jobcomp_filetxt.c) writes each record with snprintf into a 1,024-byte buffer:
//   JobId=%lu UserId=%s(%lu) GroupId=%s(%lu) Name=%s JobState=%s Partition=%s TimeLimit=%s
//   StartTime=%s EndTime=%s NodeList=%s NodeCnt=%u ProcCnt=%u WorkDir=%s ReservationName=%s
//   Tres=%s Account=%s QOS=%s WcKey=%s Cluster=%s SubmitTime=%s EligibleTime=%s%s%s
//   DerivedExitCode=%s ExitCode=%s %s\n
// The user name is copied into a 32-byte buffer (cut at 31 bytes), and uid_to_string() answers
// "nobody" for every uid it cannot resolve. The working directory (`sbatch -D`, any path a user
// can mkdir, newlines included) is written raw, like the name.
// What must hold (brief; docs/COORDINATOR.md "What Slurm must provide"): nothing a non-root user
// writes into their own job's fields reads as another user's job; a record that cannot be read
// unambiguously is skipped and counted.

import { expect, test } from 'vitest';
import { parseJobComp } from '../../../coordinator/batch/jobcomp-parse.ts';

const PARTS = ['cpu'];

/** One record as slurmctld 22.05 writes it (without its newline). */
function rec(o: { id: number; user?: string; uid?: number; name?: string; state?: string; start?: string; end?: string; workDir?: string; tail?: string }): string {
  const user = o.user ?? 'mallory';
  const uid = o.uid ?? 1002;
  return (
    `JobId=${o.id} UserId=${user}(${uid}) GroupId=${user}(${uid}) Name=${o.name ?? 'job'} JobState=${o.state ?? 'COMPLETED'} Partition=cpu ` +
    `TimeLimit=60 StartTime=${o.start ?? '2026-01-01T00:00:00'} EndTime=${o.end ?? '2026-01-01T00:10:00'} NodeList=n1 NodeCnt=1 ProcCnt=1 ` +
    `WorkDir=${o.workDir ?? '/home/' + user} ` +
    (o.tail ?? 'ReservationName= Tres=cpu=1,mem=1G,node=1,billing=1 Account=proj QOS=normal WcKey= Cluster=c SubmitTime=2026-01-01T00:00:00 EligibleTime=2026-01-01T00:00:00 DerivedExitCode=0:0 ExitCode=0:0 ')
  );
}

test('a working directory with a newline cannot write a finished job of another user', () => {
  // mallory: mkdir "$(printf '/tmp/x\nJobId=...')" && sbatch -D that-dir. WorkDir comes after
  // JobState, so the first line has its state and is not taken as cut by a newline in the name;
  // the second line is mallory's text up to `WorkDir=/y` followed by the real record's tail, and
  // holds each key once. Expected: mallory's record is cut (it has no ExitCode tail): it and the
  // lines after it are skipped and counted, none is alice's job. Today alice's `train` is
  // learned as a one-second job.
  const forged =
    '/tmp/x\nJobId=99999 UserId=alice(1001) GroupId=alice(1001) Name=train JobState=COMPLETED Partition=cpu TimeLimit=600 ' +
    'StartTime=2026-01-01T00:00:00 EndTime=2026-01-01T00:00:01 NodeList=n1 NodeCnt=1 ProcCnt=1 WorkDir=/y';
  const log = `${rec({ id: 7, name: 'innocent', workDir: forged, state: 'FAILED' })}\n`;
  const r = parseJobComp(log, PARTS);
  expect(r.jobs.filter((j) => j.user === 'alice')).toEqual([]);
  expect(r.skipped).toBeGreaterThan(0);
});

test('a forged record with a future job id does not stop the real job with that id being learned', () => {
  // Same forgery, but what it costs the victim even where the forged line were dropped later: the
  // ids remembered by RunTimeHistory make the real job 99999 (alice's, months later) never count.
  // Two finished records with one JobId in one log cannot both be slurmctld's: expected, neither
  // is taken (skipped and counted). Today the first (the forged one) is returned as well.
  const forged =
    '/tmp/x\nJobId=99999 UserId=alice(1001) GroupId=alice(1001) Name=train JobState=COMPLETED Partition=cpu TimeLimit=600 ' +
    'StartTime=2026-01-01T00:00:00 EndTime=2026-01-01T00:00:01 NodeList=n1 NodeCnt=1 ProcCnt=1 WorkDir=/y';
  const log = [rec({ id: 7, workDir: forged, state: 'FAILED' }), rec({ id: 99999, user: 'alice', uid: 1001, name: 'train', end: '2026-01-01T05:00:00' })].join('\n') + '\n';
  const r = parseJobComp(log, PARTS);
  expect(r.jobs.filter((j) => j.id === '99999')).toEqual([]);
});

test('two finished records with the same job id and different owners are not both learned', () => {
  // A job id names one job. Two COMPLETED records of job 500, one alice's and one bob's, cannot
  // both be slurmctld's (a requeued job writes REQUEUED first, then one final state): the log has
  // been forged or is not one cluster's. Expected: neither is learned. Today both are returned.
  const log = [rec({ id: 500, user: 'alice', uid: 1001, name: 'a' }), rec({ id: 500, user: 'bob', uid: 1003, name: 'b' })].join('\n') + '\n';
  const r = parseJobComp(log, PARTS);
  expect(r.jobs).toEqual([]);
  expect(r.skipped).toBe(2);
});

test('"nobody" (a uid slurmctld could not resolve) is not one user for every uid', () => {
  // uid_to_string() answers "nobody" for any uid not in slurmctld's passwd (an LDAP outage, a user
  // added later). Jobs of uid 1001 and uid 1003 then both read as user "nobody", whose estimates
  // mix two people's work — and a pending job of a real user named nobody would be planned by
  // them. Expected: two uids never read as one user (skip such records, or key them by uid).
  const log = [rec({ id: 1, user: 'nobody', uid: 1001, name: 'train' }), rec({ id: 2, user: 'nobody', uid: 1003, name: 'train' })].join('\n') + '\n';
  const r = parseJobComp(log, PARTS);
  expect(new Set(r.jobs.map((j) => j.user)).size).toBe(r.jobs.length);
});

test('a user name cut at 31 bytes by slurmctld is not read as another user', () => {
  // _get_user_name() copies the name into char[32]: users `hpc_department_of_physics_alice`
  // and `hpc_department_of_physics_alice2` (uids 1001, 1004) both read as the 31-byte prefix,
  // which is also exactly the first user's name. Expected: a 31-byte user name (possibly cut)
  // whose uid differs from another record with the same name is not learned; at least the job
  // of uid 1004 must not be attributed to the user named by the prefix.
  const short = 'hpc_department_of_physics_alice';
  expect(short.length).toBe(31);
  const log = [rec({ id: 1, user: short, uid: 1001, name: 'train' }), rec({ id: 2, user: short, uid: 1004, name: 'train', end: '2026-01-02T00:00:00' })].join('\n') + '\n';
  const r = parseJobComp(log, PARTS);
  expect(r.jobs.filter((j) => j.id === '2')).toEqual([]);
});
