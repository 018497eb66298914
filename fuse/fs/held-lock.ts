// A lib/dir-lock.ts lock held for as long as a mount runs, which may be weeks, on a path where a
// tmp cleaner (systemd-tmpfiles, tmpwatch) removes files nobody has touched for days. A record
// lock belongs to the file, not to the path: once the lock file is unlinked, its holder's lock is
// on a file nobody else can open, and a new file at the path is free. So:
//  - the lock file, the PID file beside it and the directory it guards are touched every few
//    seconds' check, which keeps age-based cleaners away, and a path that no longer is the file
//    locked (removed by hand) is locked again;
//  - a start that finds the lock file missing does not take a new one while the PID file beside
//    it names a process that still runs (or, written in another PID namespace, was touched by its
//    holder lately): the owner may run on, holding the removed file;
//  - a holder that finds the path locked by another process when it comes to lock it again has
//    lost it, and is told (onLost), so that it stops acting as the owner.

import { existsSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { type DirLock, DirLocked, lastHolder, lockDirSync } from '../../lib/dir-lock.ts';
import { pidAlive } from '../../lib/pid.ts';

/**
 * How often the lock file is touched and checked. A removed lock file is locked again within
 * this; a stat and two utimes every 15 s cost nothing, and keep the window in which only the
 * PID file stands for the owner short.
 */
const REFRESH_MS = 15_000;
/**
 * A PID file from another PID namespace cannot be looked up; touched within this many checks, its
 * holder is taken for running. Long enough for a holder stalled by a loaded host.
 */
const FRESH_CHECKS = 4;

export interface HoldOptions {
  /** Check interval (tests shorten it). */
  readonly everyMs?: number;
  /** Another path kept fresh with the lock: the directory it guards, when one exists. */
  readonly guards?: string;
  /** The lock was taken by another process after its file was removed. */
  readonly onLost?: (err: unknown) => void;
}

function inode(path: string): number | undefined {
  try {
    return statSync(path).ino;
  } catch {
    return undefined;
  }
}

function touch(path: string, now: Date): void {
  try {
    utimesSync(path, now, now);
  } catch {
    // gone: the lock file is taken again below; the directory is made again when next used
  }
}

/**
 * The process the PID file beside `<dir>/<name>.lock` says runs and holds it (its file perhaps
 * removed), if any: a PID of this namespace that is alive, or one of another namespace touched
 * lately. Read before taking the lock, which writes the taker's own PID there.
 */
export function runningHolder(dir: string, name: string, everyMs = REFRESH_MS): DirLocked | undefined {
  const h = lastHolder(dir, name);
  if (!h || h.pid === process.pid) return undefined;
  if (h.sameNamespace) return pidAlive(h.pid) ? new DirLocked(dir, h.pid) : undefined;
  return Date.now() - h.mtimeMs < FRESH_CHECKS * everyMs ? new DirLocked(dir, undefined) : undefined;
}

/** lockDirSync(dir, name), kept fresh and re-taken as above until released. */
export function holdLock(dir: string, name: string, options: HoldOptions = {}): DirLock {
  const everyMs = options.everyMs ?? REFRESH_MS;
  const lockPath = join(dir, `${name}.lock`);
  if (!existsSync(lockPath)) {
    const owner = runningHolder(dir, name, everyMs);
    if (owner) throw owner;
  }
  let lock = lockDirSync(dir, name);
  let ino = inode(lock.path);
  let lost = false;
  const timer = setInterval(() => {
    const now = new Date();
    touch(lock.path, now);
    touch(join(dir, `${name}.pid`), now);
    if (options.guards) touch(options.guards, now);
    if (lost || inode(lock.path) === ino) return;
    try {
      lock.release();
      lock = lockDirSync(dir, name);
      ino = inode(lock.path);
    } catch (err) {
      // Another process locked the new file first: it takes itself for the owner now.
      lost = true;
      options.onLost?.(err);
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
