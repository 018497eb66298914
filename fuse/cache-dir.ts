// Where a mount keeps staging files when it is given no --cache-dir. With --write-back the journal
// must outlive the process, so it goes under the user's cache directory; without it, a directory
// of the user's under the system temporary directory. Either way the name is the same at every
// start, so a mount finds and removes what a killed one left (see fs/leftovers.ts).

import { lstat, mkdir } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fsErrors } from './errors.ts';

/** Where --write-back keeps its journal unless --cache-dir says otherwise. */
export function defaultJournalDir(bucket: string, prefix: string): string {
  const base = process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache');
  const name = prefix ? `${bucket}-${prefix.replace(/[^A-Za-z0-9._-]/g, '_')}` : bucket;
  return join(base, 'estuary', name);
}

/**
 * `<tmp>/estuary-<uid>`, made private to this user. A name anyone can guess in a shared /tmp
 * could have been made first by someone else, or be a symlink: such a directory is refused.
 */
export async function defaultStagingDir(): Promise<string> {
  const uid = process.getuid?.() ?? 0;
  const dir = join(tmpdir(), `estuary-${uid}`);
  await mkdir(dir, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw fsErrors.cacheDir(dir, err.message);
  });
  const st = await lstat(dir);
  if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o077) !== 0) {
    throw fsErrors.cacheDir(dir, 'is not a directory private to this user; remove it or pass --cache-dir');
  }
  return dir;
}
