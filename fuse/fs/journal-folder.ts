// The write-back journal's folder, `<cache-dir>/journal`. What is in it is uploaded with the
// mounting user's credentials, and what is closed on the mount is written into it, so nobody else
// may have a hand in it: a --cache-dir may be shared (an HPC /scratch, mode 1777), where another
// user can make `journal` first, or a symlink by that name to a folder of theirs. The folder is
// taken only when it is a real directory of this user's that no one else may write, in a
// --cache-dir where others cannot rename it away (sticky, or not writable by others); and only
// when it holds nothing but what the journal writes (a user's own folder of that name is not a
// journal, and its files are not the journal's to delete).

import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fsErrors } from '../errors.ts';
import { journalFile } from './journal-record.ts';

/** Files named in a refusal: enough to find them, not a listing of a big folder. */
const NAMES_SHOWN = 3;

/** Makes `dir` if it is missing, and refuses it when it is not safe to take: see above. */
export async function prepareJournalDir(dir: string): Promise<void> {
  // Not recursive: start() made --cache-dir, and a recursive mkdir would make missing parents
  // of a folder that is not ours to make.
  await mkdir(dir, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  const parent = await stat(dirname(dir));
  if ((parent.mode & 0o002) !== 0 && (parent.mode & 0o1000) === 0)
    throw fsErrors.journalDir(dir, `any user may write to ${dirname(dir)}, which is not sticky, and could swap the journal folder`);
  let fh;
  try {
    fh = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (err) {
    // A symlink answers ELOOP, or ENOTDIR as O_DIRECTORY is checked first.
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ELOOP' && code !== 'ENOTDIR') throw err;
    const link = (await lstat(dir)).isSymbolicLink();
    throw fsErrors.journalDir(dir, link ? 'it is a symlink' : 'it is not a directory');
  }
  try {
    const st = await fh.stat();
    const uid = process.getuid?.() ?? 0;
    if (st.uid !== uid) throw fsErrors.journalDir(dir, `it belongs to uid ${st.uid}, not to this user (uid ${uid})`);
    if ((st.mode & 0o022) !== 0) throw fsErrors.journalDir(dir, 'other users may write to it');
    // Records name keys and data files hold what was written: this user's alone.
    if ((st.mode & 0o077) !== 0) await fh.chmod(0o700);
  } finally {
    await fh.close();
  }
  const foreign = (await readdir(dir)).filter((n) => journalFile(n).kind === 'foreign');
  if (foreign.length > 0) {
    const shown = foreign.slice(0, NAMES_SHOWN).join(', ') + (foreign.length > NAMES_SHOWN ? `, … (${foreign.length} in all)` : '');
    throw fsErrors.journalDir(dir, `it holds files the journal did not write (${shown})`);
  }
}

/**
 * How many complete entries (closed, acknowledged, not uploaded) the journal folder `dir` holds,
 * judged by their names alone; 0 when there is no such folder.
 */
export async function entriesLeft(dir: string): Promise<number> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return names.filter((n) => {
    const f = journalFile(n);
    return f.kind === 'entry' && f.record && !f.tmp;
  }).length;
}
