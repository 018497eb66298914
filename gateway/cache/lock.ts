// One gateway per cache directory. A second gateway on the same --cache-dir would empty v1/tmp/
// at its start, where the first one's fills are being written, and both would evict and replace
// each other's files behind their in-memory indexes. The lock is lib/dir-lock.ts's kernel lock,
// so a gateway killed with -9 leaves nothing that stops the next start.

import { DirLocked, type DirLock, lockDir } from '../../lib/dir-lock.ts';
import type { Logger } from '../../lib/log.ts';
import { gatewayErrors } from '../errors.ts';

export async function lockCacheDir(dir: string, log: Logger): Promise<DirLock> {
  try {
    return await lockDir(dir, 'gateway');
  } catch (err) {
    if (err instanceof DirLocked) {
      throw gatewayErrors.cacheDirLocked(dir, err.pid);
    }
    const code = (err as { code?: string }).code;
    // A file system without record locks (some NFS mounts) cannot be guarded, but can be used.
    if (code === 'ERR_SQLITE_ERROR') {
      log.warn({ cacheDir: dir, err: (err as Error).message }, 'cannot lock the cache directory; make sure no other gateway uses it');
      return { path: dir, release: () => undefined };
    }
    throw gatewayErrors.cacheDir(dir, code ?? String(err));
  }
}
