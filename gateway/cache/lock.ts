// One gateway per cache directory. A second gateway on the same --cache-dir would empty v1/tmp/
// at its start, where the first one's fills are being written, and both would evict and replace
// each other's files behind their in-memory indexes. The lock is lib/dir-lock.ts's kernel lock,
// so a gateway killed with -9 leaves nothing that stops the next start.
//
// A record lock belongs to a file, not to its path: once `gateway.lock` is unlinked (a tmp cleaner
// on a cache under /tmp or /var/tmp, an operator removing a "stale lock"), a second gateway would
// create a new file there and lock it. So the gateway locks two files, `gateway.lock` and a
// hidden `.gateway.lock` (a second start is refused while either is held), and checks every few
// seconds that each path still is the file it locked, taking the path again if not.

import { statSync } from 'node:fs';
import { DirLocked, type DirLock, lockDir } from '../../lib/dir-lock.ts';
import type { Logger } from '../../lib/log.ts';
import { gatewayErrors } from '../errors.ts';

const NAMES = ['gateway', '.gateway'] as const;
/** How often the lock files' identity is checked. */
const CHECK_MS = 5000;

function inode(path: string): number | undefined {
  try {
    return statSync(path).ino;
  } catch {
    return undefined;
  }
}

async function lockOne(dir: string, name: string, log: Logger): Promise<DirLock> {
  try {
    return await lockDir(dir, name);
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

interface Held {
  lock: DirLock;
  ino: number | undefined;
}

export async function lockCacheDir(dir: string, log: Logger): Promise<DirLock> {
  const held: Held[] = [];
  try {
    for (const name of NAMES) {
      const lock = await lockOne(dir, name, log);
      held.push({ lock, ino: inode(lock.path) });
    }
  } catch (err) {
    for (const h of held) h.lock.release();
    throw err;
  }
  let checking = false;
  const check = async () => {
    if (checking) return;
    checking = true;
    try {
      for (const [i, h] of held.entries()) {
        if (h.ino === undefined || inode(h.lock.path) === h.ino) continue;
        log.error({ path: h.lock.path }, 'cache directory lock file was removed or replaced; locking the path again');
        const again = await lockOne(dir, NAMES[i]!, log).catch((err: unknown) => {
          log.error({ err: String(err) }, 'cannot lock the cache directory again; another gateway may use it');
          return undefined;
        });
        if (!again) continue;
        // The old file's lock is kept too: it cannot hurt, and releasing it is not needed.
        held.push({ lock: h.lock, ino: undefined });
        held[i] = { lock: again, ino: inode(again.path) };
      }
    } finally {
      checking = false;
    }
  };
  const timer = setInterval(() => void check(), CHECK_MS).unref();
  return {
    path: held[0]!.lock.path,
    release() {
      clearInterval(timer);
      for (const h of held) h.lock.release();
    },
  };
}
