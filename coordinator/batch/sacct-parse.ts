// Reading finished jobs from `sacct --parsable2 --noheader --format=SACCT_FORMAT`, Slurm 22.05,
// from its database (slurmdbd) or, with `-c`, from the job completion log (jobcomp/filetxt).
// The text is hostile input: every user names their jobs, a job name may hold the delimiter `|`,
// a newline or anything else, and a completion log is a file anyone's job name writes into. So:
// - the fields are separated by a delimiter made afresh for each read (sacct --delimiter, random
//   words a job name written before the read cannot hold), and the job id is asked again after
//   the name: a line is a record only when its last field equals its first. A name with a
//   newline leaves lines that are neither, skipped and counted; a name holding the delimiter
//   (only `|` where a caller gives none) shifts nothing, as whatever lies between the fifth
//   field and the last is the name;
// - every other field must look exactly as Slurm prints it, and a line that does not is skipped
//   and counted, never half-read;
// - in the completion log a name with a newline cuts its record there: the cut record has no
//   state, and what follows it up to the record's tail is the name's text, which may read as
//   records of anyone. The log cannot say where the name ends, so every line after a cut record
//   is skipped and counted. Pure.

import type { FinishedJob } from '../run-times.ts';

/** The fields asked of sacct, in this order: the job name, then the job id again (see above). */
export const SACCT_FORMAT = 'JobIDRaw,State,ElapsedRaw,User,Partition,JobName,JobIDRaw';
const FIELDS = SACCT_FORMAT.split(',').length;

/**
 * States whose run time is the work's: COMPLETED, and TIMEOUT (it ran to its limit; the work would
 * have taken at least that). A failed, cancelled, preempted or out-of-memory job's run time says
 * how long it took to fail, not how long the work runs.
 */
const FINISHED = new Set(['COMPLETED', 'TIMEOUT']);

/** A run longer than a year is no run time but a broken record (ElapsedRaw is 32 bit seconds). */
const MAX_ELAPSED_S = 366 * 86_400;

/** Longer names are cut: a key, not a store for whatever a user writes. */
export const MAX_NAME = 200;

/** User and partition names as Slurm allows them: no spaces, separators or control characters. */
const NAME = /^[\w.@+-]{1,64}$/;

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
  const jobs: FinishedJob[] = [];
  let skipped = 0;
  let cut = false;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const f = line.split(delimiter);
    if (cut || f.length < FIELDS || f[0] !== f[f.length - 1]) {
      skipped++;
      continue;
    }
    const [id, stateText, elapsed, userText, partition] = f as [string, string, string, string, string];
    const name = f.slice(FIELDS - 2, -1).join(delimiter).slice(0, MAX_NAME);
    const user = /^(.*)\(\d+\)$/.exec(userText)?.[1] ?? userText;
    const state = stateText.split(' ')[0]!;
    if (state === '' && /^\d{1,10}$/.test(id)) {
      // Slurm writes every record with its state: this one was cut by a newline in its name.
      cut = true;
      skipped++;
      continue;
    }
    if (!/^\d{1,10}$/.test(id) || !/^\d{1,10}$/.test(elapsed) || Number(elapsed) > MAX_ELAPSED_S || !NAME.test(user) || !NAME.test(partition) || !/^[A-Z_]+$/.test(state)) {
      skipped++;
      continue;
    }
    if (!FINISHED.has(state) || !partitions.includes(partition)) continue;
    jobs.push({ id, user, partition, name, elapsedMs: Number(elapsed) * 1000 });
  }
  return cut ? { jobs, skipped, cut } : { jobs, skipped };
}
