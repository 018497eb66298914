// One `stage in` per destination at a time. Two runs on one directory download the same keys into
// the same partial files: one removes the other's and writes its own, and without this lock the
// first to finish could publish bytes the other wrote. lib/dir-lock.ts's kernel record lock is
// dropped by the kernel however the holder dies (kill -9 included), so it never goes stale.
// The lock file lives in the state directory, named by a digest of the destination's real path,
// so a copy leaves in the destination exactly the source's files (a lock file cannot be removed
// after a run without racing a run that just opened it).

import { createHash } from 'node:crypto';
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { DirLocked, type DirLock, lockDir } from '../lib/dir-lock.ts';
import { stageErrors } from './errors.ts';

/**
 * Takes the destination's lock. Another run holding it is ESTUARY_STAGE_LOCKED; a file system
 * without record locks (some NFS mounts) cannot be guarded, and `onUnguarded` says so.
 */
export async function lockDestination(root: string, stateDir: string, onUnguarded: (why: string) => void): Promise<DirLock> {
  const real = await realpath(root).catch(() => root);
  const name = `dest-${createHash('sha256').update(real).digest('hex').slice(0, 32)}`;
  try {
    return await lockDir(join(stateDir, 'locks'), name);
  } catch (err) {
    if (err instanceof DirLocked) throw stageErrors.locked(root, err.pid);
    if ((err as { code?: string }).code === 'ERR_SQLITE_ERROR') {
      onUnguarded((err as Error).message);
      return { path: root, release: () => undefined };
    }
    throw stageErrors.destination(root, (err as { code?: string }).code ?? String(err));
  }
}
