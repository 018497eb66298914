// Reading finished jobs from `sacct --parsable2 --noheader --format=SACCT_FORMAT`, Slurm 22.05,
// from its database (slurmdbd). The job completion log is read by jobcomp-parse.ts, not through
// `sacct -c`, which cannot tell a job name holding ` UserId=alice(1001)` from slurmctld's words.
// The text is hostile input: every user names their jobs, a job name may hold the delimiter `|`,
// a newline or anything else. So:
// - the fields are separated by a delimiter made afresh for each read (sacct --delimiter, random
//   words a job name written before the read cannot hold), and the job id is asked again after
//   the name: a line is a record only when its last field equals its first. A name with a
//   newline leaves lines that are neither, skipped and counted; a name holding the delimiter
//   (only `|` where a caller gives none) shifts nothing, as whatever lies between the fifth
//   field and the last is the name;
// - every other field must look exactly as Slurm prints it, and a line that does not is skipped
//   and counted, never half-read;
// - a record with an id but no state was cut by a newline in its name (as `sacct -c` prints
//   one): what follows may read as records of anyone, so every line after it is skipped and
//   counted. Pure.

import { eachSliced, linesOf } from '../../lib/slices.ts';
import type { FinishedJob } from '../run-times.ts';

/** The fields asked of sacct, in this order: the job name, then the job id again (see above). */
export const SACCT_FORMAT = 'JobIDRaw,State,ElapsedRaw,User,Partition,JobName,JobIDRaw';
const FIELDS = SACCT_FORMAT.split(',').length;

/**
 * States whose run time is the work's: COMPLETED, and TIMEOUT (it ran to its limit; the work would
 * have taken at least that). A failed, cancelled, preempted or out-of-memory job's run time says
 * how long it took to fail, not how long the work runs.
 */
export const FINISHED = new Set(['COMPLETED', 'TIMEOUT']);

/** A run longer than a year is no run time but a broken record (ElapsedRaw is 32 bit seconds). */
export const MAX_ELAPSED_S = 366 * 86_400;

/** Longer names are cut: a key, not a store for whatever a user writes. */
export const MAX_NAME = 200;

/** User and partition names as Slurm allows them: no spaces, separators or control characters. */
export const NAME = /^[\w.@+-]{1,64}$/;

export interface SacctRead {
  readonly jobs: FinishedJob[];
  /** Lines that were not a record as Slurm prints one (a job name with a newline leaves two). */
  readonly skipped: number;
  /** A record cut by a newline in its name was found (the completion log): the lines after it were skipped. */
  readonly cut?: boolean;
}

/**
 * Finished jobs of the served partitions. In the completion log's answer User is `name(uid)`;
 * the database's is the bare name: both read as the name.
 */
export function parseSacct(text: string, partitions: readonly string[], delimiter = '|'): SacctRead {
  const r = new SacctLines(partitions, delimiter);
  for (const line of linesOf(text)) r.read(line);
  return r.result();
}

/** parseSacct in slices, giving the event loop back between them (an answer may be 500 MiB). */
export async function parseSacctSliced(text: string, partitions: readonly string[], delimiter = '|'): Promise<SacctRead> {
  const r = new SacctLines(partitions, delimiter);
  await eachSliced(linesOf(text), (line) => r.read(line));
  return r.result();
}

/** sacct's answer read a line at a time. */
class SacctLines {
  private readonly jobs: FinishedJob[] = [];
  private skipped = 0;
  private cut = false;
  private readonly partitions: readonly string[];
  private readonly delimiter: string;

  constructor(partitions: readonly string[], delimiter: string) {
    this.partitions = partitions;
    this.delimiter = delimiter;
  }

  read(line: string): void {
    if (line.trim() === '') return;
    const f = line.split(this.delimiter);
    if (this.cut || f.length < FIELDS || f[0] !== f[f.length - 1]) {
      this.skipped++;
      return;
    }
    const [id, stateText, elapsed, userText, partition] = f as [string, string, string, string, string];
    const name = f.slice(FIELDS - 2, -1).join(this.delimiter).slice(0, MAX_NAME);
    const user = /^(.*)\(\d+\)$/.exec(userText)?.[1] ?? userText;
    const state = stateText.split(' ')[0]!;
    if (state === '' && /^\d{1,10}$/.test(id)) {
      // Slurm writes every record with its state: this one was cut by a newline in its name.
      this.cut = true;
      this.skipped++;
      return;
    }
    if (!/^\d{1,10}$/.test(id) || !/^\d{1,10}$/.test(elapsed) || Number(elapsed) > MAX_ELAPSED_S || !NAME.test(user) || !NAME.test(partition) || !/^[A-Z_]+$/.test(state)) {
      this.skipped++;
      return;
    }
    if (!FINISHED.has(state) || !this.partitions.includes(partition)) return;
    this.jobs.push({ id, user, partition, name, elapsedMs: Number(elapsed) * 1000 });
  }

  result(): SacctRead {
    return this.cut ? { jobs: this.jobs, skipped: this.skipped, cut: true } : { jobs: this.jobs, skipped: this.skipped };
  }
}
