// Reading finished jobs from Slurm's job completion log (JobCompType=jobcomp/filetxt), the file
// itself. slurmctld 22.05 writes one line a job:
//   JobId=N UserId=u(uid) GroupId=g(gid) Name=<name, raw> JobState=S Partition=P TimeLimit=T
//   StartTime=%FT%T EndTime=%FT%T NodeList=... WorkDir=<raw> ... ExitCode=0:0
// The job name and the working directory are written raw, and every user names their jobs, so
// the line cannot always be read: `sacct -c` splits it at spaces, the last `Key=` winning, and a
// job named `x UserId=alice(1001) Name=train` reads as alice's `train`. Here:
// - a line is read only when each of slurmctld's keys appears in it at most once (as a word:
//   at the start or after a space). A name or working directory holding ` UserId=`, ` JobId=`,
//   ` JobState=` or any other of them makes the line unreadable: it is skipped and counted, never
//   attributed to anyone. Other words with `=` in a name are the name's;
// - a line that starts a record (`JobId=`) but has no state was cut by a newline in its name:
//   what follows it, up to the record's tail, is the name's text and may read as records of
//   anyone, and nothing in the log says where it ends. Every line after a cut record is skipped
//   and counted;
// - every field read must look as slurmctld writes it (the same checks as sacct-parse.ts).
// Pure.

import { eachSliced, linesOf } from '../../lib/slices.ts';
import type { FinishedJob } from '../run-times.ts';
import { FINISHED, MAX_ELAPSED_S, MAX_NAME, NAME, type SacctRead } from './sacct-parse.ts';

/** Every key of slurmctld 22.05's record (jobcomp_filetxt.c, JOB_FORMAT, array and het job ones). */
const KEYS = new Set([
  'JobId', 'UserId', 'GroupId', 'Name', 'JobState', 'Partition', 'TimeLimit', 'StartTime', 'EndTime', 'NodeList', 'NodeCnt',
  'ProcCnt', 'WorkDir', 'ReservationName', 'Tres', 'Account', 'QOS', 'WcKey', 'Cluster', 'SubmitTime', 'EligibleTime',
  'ArrayJobId', 'ArrayTaskId', 'HetJobId', 'HetJobOffset', 'DerivedExitCode', 'ExitCode',
]);

/** A `Key=` at the start of the line or after a space. */
const WORD_KEY = /(?:^| )([A-Za-z]+)=/g;

/** How slurmctld 22.05 ends every record (JOB_FORMAT in jobcomp_filetxt.c). */
const TAIL = / DerivedExitCode=\d+:\d+ ExitCode=\d+:\d+ ?$/;

/** `%FT%T` in slurmctld's local time zone, as the coordinator's (docs: same time zone). */
const TIME = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)$/;

export function parseJobComp(text: string, partitions: readonly string[]): SacctRead {
  const r = new JobCompRecords(partitions);
  for (const line of linesOf(text)) r.read(line);
  return r.result();
}

/** parseJobComp in slices, giving the event loop back between them. */
export async function parseJobCompSliced(text: string, partitions: readonly string[]): Promise<SacctRead> {
  const r = new JobCompRecords(partitions);
  await eachSliced(linesOf(text), (line) => r.read(line));
  return r.result();
}

type Candidate = FinishedJob & { readonly key: number | string };

/**
 * The records of one log, read in pieces (each piece whole lines, in order): take() gives the
 * jobs of the lines read since the last take(), and `skipped` counts as a read of every line so
 * far would. What carries over between pieces is what a later line can change: whether a record
 * was cut (every line after it is skipped), each finished job id seen (a second record of it
 * skips both, also when the first came in an earlier piece) and each user's uids. A job taken
 * in an earlier piece that a later line disqualifies (a second record of its id, a second uid of
 * its user) is handed back by takeBack(), so that what was learned from it is taken back out.
 */
export class JobCompRecords {
  /** Per finished job id: its first record's user (index) × 2, plus 1 once a second record came. */
  private readonly ids = new Map<number | string, number>();
  /** Per user: its uids, and how many of its job ids have one record only. */
  private readonly users: { name: string; uids: Set<string>; singles: number }[] = [];
  /** Jobs to take back: ids written twice, and (by index) users found with a second uid, since the last takeBack(). */
  private back: { id: string; user: string }[] = [];
  private readonly usersBack = new Set<number>();
  private readonly userIndex = new Map<string, number>();
  private fresh: Candidate[] = [];
  private lineSkipped = 0;
  private dupRecords = 0;
  private cut = false;
  private readonly partitions: readonly string[];

  constructor(partitions: readonly string[]) {
    this.partitions = partitions;
  }

  read(line: string): void {
    if (line.trim() === '') return;
    if (this.cut) {
      this.lineSkipped++;
      return;
    }
    const at = keyPositions(line);
    if (!at || at.get('JobId') !== 0) {
      this.lineSkipped++;
      return;
    }
    if (!at.has('JobState') || !TAIL.test(line)) {
      // slurmctld writes every record with its state and ends it with its exit codes: this one was
      // cut by a newline in its name or in a field after the state (its working directory).
      this.cut = true;
      this.lineSkipped++;
      return;
    }
    const job = this.job(line, at);
    if (job === 'unreadable') this.lineSkipped++;
    else if (job) this.add(job);
  }

  /**
   * A job id names one job, and a user name one uid: two finished records of one id, or one user
   * name written with two uids (slurmctld writes "nobody" for every uid it cannot resolve, and cuts
   * names at 31 bytes), cannot both be read as written. Every record of either is skipped.
   */
  private add(job: FinishedJob & { uid: string }): void {
    const { uid, ...finished } = job;
    let u = this.userIndex.get(job.user);
    if (u === undefined) {
      u = this.users.length;
      // A copy: the name read is a slice of the text read, which a kept slice would keep whole.
      const name = Array.from(job.user).join('');
      this.users.push({ name, uids: new Set(), singles: 0 });
      this.userIndex.set(name, u);
    }
    const user = this.users[u]!;
    user.uids.add(uid);
    if (user.uids.size === 2) this.usersBack.add(u);
    // Ids as numbers take a third of the memory of strings; one with a leading zero (never
    // slurmctld's) stays a string, so that `07` and `7` remain two ids as written.
    const key = job.id.length > 1 && job.id.startsWith('0') ? job.id : Number(job.id);
    const seen = this.ids.get(key);
    if (seen === undefined) {
      this.ids.set(key, u * 2);
      this.users[u]!.singles++;
      this.fresh.push({ ...finished, key });
    } else if (seen % 2 === 0) {
      this.ids.set(key, seen + 1);
      this.users[seen / 2]!.singles--;
      this.dupRecords += 2;
      this.back.push({ id: String(key), user: this.users[seen / 2]!.name });
    } else this.dupRecords++;
  }

  /** The jobs of the lines read since the last take() that are still readable as one job of one user. */
  take(): FinishedJob[] {
    const out: FinishedJob[] = [];
    for (const { key, ...job } of this.fresh) {
      const seen = this.ids.get(key)!;
      if (seen % 2 === 0 && this.users[seen / 2]!.uids.size === 1) out.push(job);
    }
    this.fresh = [];
    return out;
  }

  /**
   * The jobs that lines read since the last takeBack() disqualified: every job of an id now
   * written twice and of a user now written with two uids, whether or not take() gave it before
   * (one it did not give is learned nowhere, and taking it back changes nothing).
   */
  takeBack(): { id: string; user: string }[] {
    if (this.usersBack.size) {
      // One pass over the ids for all the users disqualified since: their jobs are that rare.
      for (const [key, seen] of this.ids) if (seen % 2 === 0 && this.usersBack.has(seen / 2)) this.back.push({ id: String(key), user: this.users[seen / 2]!.name });
      this.usersBack.clear();
    }
    const out = this.back;
    this.back = [];
    return out;
  }

  /** Lines and records skipped over everything read, as one read of it all counts them. */
  get skipped(): number {
    let n = this.lineSkipped + this.dupRecords;
    for (const u of this.users) if (u.uids.size > 1) n += u.singles;
    return n;
  }

  result(): SacctRead {
    const jobs = this.take();
    return this.cut ? { jobs, skipped: this.skipped, cut: true } : { jobs, skipped: this.skipped };
  }

  /** The finished job of a line whose keys are each there once; undefined: not one to learn from. */
  private job(line: string, at: ReadonlyMap<string, number>): (FinishedJob & { uid: string }) | 'unreadable' | undefined {
    const word = (key: string) => (at.has(key) ? valueAt(line, at.get(key)! + key.length + 1) : undefined);
    const id = word('JobId') ?? '';
    const userText = word('UserId') ?? '';
    const state = word('JobState') ?? '';
    const partition = word('Partition') ?? '';
    const nameAt = at.get('Name');
    const stateAt = at.get('JobState')!;
    if (nameAt === undefined || nameAt > stateAt) return 'unreadable';
    const name = line.slice(nameAt + 'Name='.length, stateAt - 1).slice(0, MAX_NAME);
    const [, user = '', uid = ''] = /^(.*)\((\d+)\)$/.exec(userText) ?? [];
    // "nobody" is what slurmctld writes for a uid it cannot resolve, unless it is nobody's own.
    if (user === 'nobody' && uid !== '65534') return 'unreadable';
    if (!/^\d{1,10}$/.test(id) || !NAME.test(user) || !NAME.test(partition) || !/^[A-Z_]+$/.test(state)) return 'unreadable';
    if (!FINISHED.has(state) || !this.partitions.includes(partition)) return undefined;
    const start = localMs(word('StartTime'));
    const end = localMs(word('EndTime'));
    if (start === undefined || end === undefined || end < start || end - start > MAX_ELAPSED_S * 1000) return 'unreadable';
    return { id, user, uid, partition, name, elapsedMs: end - start };
  }
}

/** Where each of slurmctld's keys starts; undefined when one is there twice (the line is ambiguous). */
function keyPositions(line: string): Map<string, number> | undefined {
  const at = new Map<string, number>();
  for (const m of line.matchAll(WORD_KEY)) {
    const key = m[1]!;
    if (!KEYS.has(key)) continue;
    if (at.has(key)) return undefined;
    at.set(key, m.index + m[0].length - key.length - 1);
  }
  return at;
}

/** The value starting at `from`, up to the next space. */
function valueAt(line: string, from: number): string {
  const end = line.indexOf(' ', from);
  return line.slice(from, end < 0 ? line.length : end);
}

function localMs(text: string | undefined): number | undefined {
  const m = text === undefined ? null : TIME.exec(text);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const t = new Date(y, mo - 1, d, h, mi, s);
  // Date rolls month 13 or day 32 over into another valid date: such a time is unreadable.
  if (t.getMonth() !== mo - 1 || t.getDate() !== d || t.getHours() !== h || mi > 59 || s > 59) return undefined;
  // Within an hour of a change of the UTC offset a local time may name two instants (the hour
  // repeated in autumn) or none (skipped in spring): such a time cannot give a run time.
  const offset = (ms: number) => new Date(ms).getTimezoneOffset();
  if (offset(t.getTime() - 3_600_000) !== offset(t.getTime() + 3_600_000)) return undefined;
  return t.getTime();
}
