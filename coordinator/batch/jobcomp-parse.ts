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

/** `%FT%T` in slurmctld's local time zone, as the coordinator's (docs: same time zone). */
const TIME = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)$/;

export function parseJobComp(text: string, partitions: readonly string[]): SacctRead {
  const r = new JobCompLines(partitions);
  for (const line of linesOf(text)) r.read(line);
  return r.result();
}

/** parseJobComp in slices, giving the event loop back between them. */
export async function parseJobCompSliced(text: string, partitions: readonly string[]): Promise<SacctRead> {
  const r = new JobCompLines(partitions);
  await eachSliced(linesOf(text), (line) => r.read(line));
  return r.result();
}

class JobCompLines {
  private readonly jobs: FinishedJob[] = [];
  private skipped = 0;
  private cut = false;
  private readonly partitions: readonly string[];

  constructor(partitions: readonly string[]) {
    this.partitions = partitions;
  }

  read(line: string): void {
    if (line.trim() === '') return;
    if (this.cut) {
      this.skipped++;
      return;
    }
    const at = keyPositions(line);
    if (!at || at.get('JobId') !== 0) {
      this.skipped++;
      return;
    }
    if (!at.has('JobState')) {
      // slurmctld writes every record with its state: this one was cut by a newline in its name.
      this.cut = true;
      this.skipped++;
      return;
    }
    const job = this.job(line, at);
    if (job === 'unreadable') this.skipped++;
    else if (job) this.jobs.push(job);
  }

  /** The finished job of a line whose keys are each there once; undefined: not one to learn from. */
  private job(line: string, at: ReadonlyMap<string, number>): FinishedJob | 'unreadable' | undefined {
    const word = (key: string) => (at.has(key) ? valueAt(line, at.get(key)! + key.length + 1) : undefined);
    const id = word('JobId') ?? '';
    const userText = word('UserId') ?? '';
    const state = word('JobState') ?? '';
    const partition = word('Partition') ?? '';
    const nameAt = at.get('Name');
    const stateAt = at.get('JobState')!;
    if (nameAt === undefined || nameAt > stateAt) return 'unreadable';
    const name = line.slice(nameAt + 'Name='.length, stateAt - 1).slice(0, MAX_NAME);
    const user = /^(.*)\(\d+\)$/.exec(userText)?.[1] ?? '';
    if (!/^\d{1,10}$/.test(id) || !NAME.test(user) || !NAME.test(partition) || !/^[A-Z_]+$/.test(state)) return 'unreadable';
    if (!FINISHED.has(state) || !this.partitions.includes(partition)) return undefined;
    const start = localMs(word('StartTime'));
    const end = localMs(word('EndTime'));
    if (start === undefined || end === undefined || end < start || end - start > MAX_ELAPSED_S * 1000) return 'unreadable';
    return { id, user, partition, name, elapsedMs: end - start };
  }

  result(): SacctRead {
    return this.cut ? { jobs: this.jobs, skipped: this.skipped, cut: true } : { jobs: this.jobs, skipped: this.skipped };
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
  if (t.getMonth() !== mo - 1 || t.getDate() !== d || h > 23 || mi > 59 || s > 59) return undefined;
  return t.getTime();
}
