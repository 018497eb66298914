// The completion log's parser against names that try other separators, case and bytes, and
// against local times that do not name one instant. Most of these hold today and stay as cheap
// regressions; the daylight-saving one fails (see its comment).

import { expect, test } from 'vitest';
import { parseJobComp } from '../../../coordinator/batch/jobcomp-parse.ts';

const PARTS = ['cpu', 'gpu'];

function rec(name: string, o: { id?: number; user?: string; start?: string; end?: string } = {}): string {
  const user = o.user ?? 'mallory';
  return (
    `JobId=${o.id ?? 7} UserId=${user}(1002) GroupId=${user}(1002) Name=${name} JobState=COMPLETED Partition=cpu TimeLimit=60 ` +
    `StartTime=${o.start ?? '2026-01-01T00:00:00'} EndTime=${o.end ?? '2026-01-01T00:10:00'} NodeList=n1 NodeCnt=1 ProcCnt=1 WorkDir=/home/${user} ` +
    'ReservationName= Tres=cpu=1 Account=proj QOS=normal WcKey= Cluster=c SubmitTime=unknown EligibleTime=unknown DerivedExitCode=0:0 ExitCode=0:0 '
  );
}

const SEPARATORS = ['\t', '\u00a0', '\u2003', '\u3000', '\u000b', '\u000c', '\r', '\u0085', '\u2028'];

test.each(SEPARATORS.map((s) => [JSON.stringify(s), s]))('a name with %s before UserId=alice(1001) stays mallory\'s', (_, sep) => {
  const name = `x${sep}UserId=alice(1001)${sep}Partition=gpu${sep}Name=train${sep}StartTime=2026-01-01T00:00:00${sep}EndTime=2026-01-01T00:00:01`;
  const r = parseJobComp(`${rec(name)}\n`, PARTS);
  // Either skipped, or mallory's own job with the whole text as its name and slurmctld's run time.
  for (const j of r.jobs) expect([j.user, j.partition, j.name, j.elapsedMs]).toEqual(['mallory', 'cpu', name, 600_000]);
});

test.each(['userid=alice(1001)', 'USERID=alice(1001)', 'UserID=alice(1001)', 'userId=alice(1001) partition=gpu name=train jobstate=COMPLETED'])('a name ending in a key of another case (%s) stays mallory\'s', (tail) => {
  const r = parseJobComp(`${rec(`x ${tail}`)}\n`, PARTS);
  for (const j of r.jobs) expect([j.user, j.partition, j.elapsedMs]).toEqual(['mallory', 'cpu', 600_000]);
});

test('CRLF line ends, NUL bytes and replacement characters do not move a record to anyone else', () => {
  const log = [rec('a\u0000 UserId\u0000=alice(1001)'), rec('b\ufffd\ufffd UserId=\ufffdalice(1001)', { id: 8 })].join('\r\n') + '\r\n';
  const r = parseJobComp(log, PARTS);
  for (const j of r.jobs) expect(j.user).toBe('mallory');
});

test('a record cut at 1,023 bytes and glued to the next one gives neither to the wrong user', () => {
  // slurmctld's snprintf cuts a long record without its newline; the next record follows on the
  // same line. A name or working directory ending in a space makes the glued JobId= a word.
  for (const pad of ['', ' ']) {
    const long = rec('n', { id: 7 }).replace('WorkDir=/home/mallory', `WorkDir=/home/mallory/${'d'.repeat(1200)}`);
    const cut = long.slice(0, 1023 - pad.length) + pad;
    const next = rec('train', { id: 8, user: 'alice', end: '2026-01-01T05:00:00' });
    const r = parseJobComp(`${cut}${next}\n`, PARTS);
    for (const j of r.jobs) expect([j.id, j.user]).toEqual(['7', 'mallory']);
    expect(r.jobs.length + r.skipped).toBe(1);
  }
});

test('a run time across the autumn clock change is not read as an hour less than it was', () => {
  // slurmctld writes local time without an offset. In Europe/Berlin, 2026-10-25 02:00–03:00 comes
  // twice: a job from 01:30 to the second 02:30 ran two hours, and one to the first 02:30 ran one;
  // the log cannot say which. Expected: a record whose start or end falls in a repeated (or
  // skipped) hour is unreadable (skipped and counted). Today it is learned as one hour.
  const tz = process.env.TZ;
  process.env.TZ = 'Europe/Berlin';
  try {
    const r = parseJobComp(`${rec('t', { start: '2026-10-25T01:30:00', end: '2026-10-25T02:30:00' })}\n`, PARTS);
    expect(r.jobs).toEqual([]);
    expect(r.skipped).toBe(1);
  } finally {
    if (tz === undefined) delete process.env.TZ;
    else process.env.TZ = tz;
  }
});
