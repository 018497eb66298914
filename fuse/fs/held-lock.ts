// A lib/dir-lock.ts lock held for as long as a mount runs, which may be weeks, on a path where a
// tmp cleaner (systemd-tmpfiles, tmpwatch) removes files nobody has touched for days. A record
// lock belongs to the file, not to the path: once the lock file is unlinked, the next start would
// create a new one, lock it, and take the running mount's staging directory or journal for a dead
// one's. So the lock file's times are refreshed every minute, which keeps age-based cleaners away,
// and a path that no longer is the file locked (removed by hand) is locked again.

import { statSync, utimesSync } from 'node:fs';
import { type DirLock, lockDirSync } from '../../lib/dir-lock.ts';

/** How often the lock file is touched and checked. */
const REFRESH_MS = 60_000;

function inode(path: string): number | undefined {
  try {
    return statSync(path).ino;
  } catch {
    return undefined;
  }
}

/** lockDirSync(dir, name), kept fresh and re-taken as above until released. */
export function holdLock(dir: string, name: string, everyMs = REFRESH_MS): DirLock {
  let lock = lockDirSync(dir, name);
  let ino = inode(lock.path);
  const timer = setInterval(() => {
    try {
      const now = new Date();
      utimesSync(lock.path, now, now);
    } catch {
      // gone: taken again below
    }
    if (inode(lock.path) === ino) return;
    try {
      lock.release();
      lock = lockDirSync(dir, name);
      ino = inode(lock.path);
    } catch {
      // Another process locked the new file first: nothing left to hold.
    }
  }, everyMs);
  timer.unref();
  return {
    get path() {
      return lock.path;
    },
    release() {
      clearInterval(timer);
      lock.release();
    },
  };
}
