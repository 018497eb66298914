// One `stage in` per destination at a time. Two runs on one directory download the same keys into
// the same partial files: one removes the other's and writes its own, and without this lock the
// first to finish could publish bytes the other wrote. lib/dir-lock.ts's kernel record lock is
// dropped by the kernel however the holder dies (kill -9 included), so it never goes stale.
// The lock file stays in the destination (removing it would race a run that just opened it).

import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { DirLocked, type DirLock, lockDir } from '../lib/dir-lock.ts';
import { stageErrors } from './errors.ts';
import { LOCK_FILES, LOCK_NAME } from './keys.ts';

/**
 * Takes the destination's lock. Another run holding it is ESTUARY_STAGE_LOCKED; a file system
 * without record locks (some NFS mounts) cannot be guarded, and `onUnguarded` says so.
 */
export async function lockDestination(root: string, onUnguarded: (why: string) => void): Promise<DirLock> {
  for (const name of LOCK_FILES) {
    const st = await lstat(join(root, name)).catch(() => undefined);
    if (st && !st.isFile()) throw stageErrors.destination(root, `${name} is not a regular file`);
  }
  try {
    return await lockDir(root, LOCK_NAME);
  } catch (err) {
    if (err instanceof DirLocked) throw stageErrors.locked(root, err.pid);
    if ((err as { code?: string }).code === 'ERR_SQLITE_ERROR') {
      onUnguarded((err as Error).message);
      return { path: root, release: () => undefined };
    }
    throw stageErrors.destination(root, (err as { code?: string }).code ?? String(err));
  }
}
