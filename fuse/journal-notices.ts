// What a start finds of the write-back journal besides its own: acknowledged files that this
// mount will not upload, said once in the log with where they wait and how to upload them.

import { join } from 'node:path';
import { defaultJournalDir } from './cache-dir.ts';
import { FS_LOG_CODES } from './errors.ts';
import { entriesLeft } from './fs/journal-folder.ts';
import type { JournalIdentity } from './fs/journal-record.ts';

type Log = { warn(o: object, m: string): void };

/**
 * Files a --write-back mount on this --cache-dir closed and did not upload (it was killed, or
 * the store was down at its unmount). A mount without --write-back does not take the journal
 * over: it would have to hold every change to those files until their older content is uploaded.
 * So it says where they wait and how to upload them.
 */
export async function warnOfJournalLeft(cacheDir: string, log: Log) {
  const journal = join(cacheDir, 'journal');
  const files = await entriesLeft(journal);
  if (files === 0) return;
  log.warn(
    { journal, files, code: FS_LOG_CODES.journalLeft },
    `the write-back journal ${journal} holds ${files} files closed on an earlier --write-back mount and not yet uploaded; this mount neither shows nor uploads them: mount with --write-back and this --cache-dir to upload them`,
  );
}

/**
 * Files in the default journal folder of this store spelled as typed, where releases that named
 * the folder by the spelling (`kek/run42/` apart from `kek/run42`) kept them.
 */
export async function warnOfJournalSpelledApart(
  typed: JournalIdentity,
  canonicalDir: string,
  log: Log,
) {
  const dir = defaultJournalDir(typed);
  if (dir === canonicalDir) return;
  const files = await entriesLeft(join(dir, 'journal'));
  if (files === 0) return;
  log.warn(
    { journal: dir, files },
    `a write-back journal of this store under another spelling of it holds ${files} files that are not uploaded; mount with --cache-dir ${dir} to upload them`,
  );
}
