// Reading finished jobs from `sacct --parsable2 --noheader --format=SACCT_FORMAT`, Slurm 22.05,
// from its database (slurmdbd) or, with `-c`, from the job completion log (jobcomp/filetxt).
// The text is hostile input: every user names their jobs, a job name may hold the delimiter `|`,
// a newline or anything else, and a completion log is a file anyone with write access shaped.
// So the job name comes last (the fields before it cannot hold `|`, and whatever follows the
// fifth `|` is the name), every other field must look exactly as Slurm prints it, and a line that
// does not is skipped and counted, never half-read. Pure.

import type { FinishedJob } from '../run-times.ts';

/** The fields asked of sacct, in this order: the job name last (see above). */
export const SACCT_FORMAT = 'JobIDRaw,State,ElapsedRaw,User,Partition,JobName';
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
}

/**
 * Finished jobs of the served partitions. In the completion log's answer User is `name(uid)`;
 * the database's is the bare name: both read as the name.
 */
export function parseSacct(text: string, partitions: readonly string[]): SacctRead {
  const jobs: FinishedJob[] = [];
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const f = line.split('|');
    if (f.length < FIELDS) {
      skipped++;
      continue;
    }
    const [id, stateText, elapsed, userText, partition] = f as [string, string, string, string, string];
    const name = f.slice(FIELDS - 1).join('|').slice(0, MAX_NAME);
    const user = /^(.*)\(\d+\)$/.exec(userText)?.[1] ?? userText;
    const state = stateText.split(' ')[0]!;
    if (!/^\d{1,10}$/.test(id) || !/^\d{1,10}$/.test(elapsed) || Number(elapsed) > MAX_ELAPSED_S || !NAME.test(user) || !NAME.test(partition) || !/^[A-Z_]+$/.test(state)) {
      skipped++;
      continue;
    }
    if (!FINISHED.has(state) || !partitions.includes(partition)) continue;
    jobs.push({ id, user, partition, name, elapsedMs: Number(elapsed) * 1000 });
  }
  return { jobs, skipped };
}
