// One process per directory: an exclusive lock held by the kernel, not by a PID in a file.
//
// Node has no flock(2). A lock file holding a PID (O_EXCL plus a liveness check) survives kill -9
// and then has to be judged stale by asking whether that PID still runs, which a reused PID
// answers wrongly, and two starters that both judge it stale race when they replace it. A POSIX
// record lock has neither problem: the kernel drops it when its process dies, however it dies, and
// it names no PID that could be reused. Node's built-in SQLite (node:sqlite, no native addon of
// ours) takes such locks: `BEGIN IMMEDIATE` on a database holds a write lock (fcntl F_SETLK on the
// file) until the transaction ends or the process exits, and a second process asking for it gets
// SQLITE_BUSY at once. The lock file is an empty database that is never written.
//
// The PID in the file beside it is only there to tell the loser who holds the lock; it decides
// nothing. Its second line names the holder's PID namespace: a holder in another one (a container
// sharing the directory) is reported as "another process", since its PID means nothing here.

import { mkdirSync, readFileSync, readlinkSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { pidAlive } from './pid.ts';

export interface DirLock {
  readonly path: string;
  release(): void;
}

/** Thrown when another process holds the lock; `pid` is that process when it could be read. */
export class DirLocked extends Error {
  readonly pid: number | undefined;
  constructor(path: string, pid: number | undefined) {
    super(`${path} is locked by ${pid === undefined ? 'another process' : `process ${pid}`}`);
    this.pid = pid;
  }
}

/** SQLite's SQLITE_BUSY: the lock is held elsewhere. */
const SQLITE_BUSY = 5;
/**
 * A winner writes its PID just after it takes the lock; a loser that reads no live PID in that
 * instant looks again for this long before it reports the holder as unknown.
 */
const PID_WAIT_MS = 500;

/** Locks held by this process, kept reachable: a collected DatabaseSync would drop its lock. */
const held = new Set<DatabaseSync>();


/** `pid:[4026531836]`, this process's PID namespace; '' where /proc does not say. */
function pidNamespace(): string {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return '';
  }
}

function readPid(path: string): number | undefined {
  try {
    const [first, ns] = readFileSync(path, 'utf8').split('\n');
    const pid = Number.parseInt(first ?? '', 10);
    if (ns && ns !== pidNamespace()) return undefined;
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

async function holderOf(pidPath: string): Promise<number | undefined> {
  const until = Date.now() + PID_WAIT_MS;
  for (;;) {
    const pid = readPid(pidPath);
    if ((pid !== undefined && pid !== process.pid && pidAlive(pid)) || Date.now() >= until) return pid;
    await sleep(50);
  }
}

/**
 * Takes `<dir>/<name>.lock` (creating `dir`) and writes this process's PID to `<dir>/<name>.pid`.
 * Throws DirLocked when another process holds it; file-system errors (EACCES, EROFS, ENOLCK on a
 * file system without record locks) are thrown as they are.
 */
export async function lockDir(dir: string, name: string): Promise<DirLock> {
  const taken = tryLock(dir, name);
  if ('pidPath' in taken) throw new DirLocked(dir, await holderOf(taken.pidPath));
  return taken;
}

export interface LockOptions {
  /**
   * false: lock only a lock file that exists (an error when it does not). For a process that
   * judges another's lock: a lock file it created itself would be free even while its owner runs
   * (its owner's lock is on the file that was removed), and taking it proves nothing.
   */
  readonly create?: boolean;
}

/**
 * lockDir for callers that cannot wait (a constructor): the holder's PID is read once, so a
 * loser racing a winner that has not written it yet reports "another process".
 */
export function lockDirSync(dir: string, name: string, options: LockOptions = {}): DirLock {
  const taken = tryLock(dir, name, options.create ?? true);
  if ('pidPath' in taken) throw new DirLocked(dir, readPid(taken.pidPath));
  return taken;
}

/** What `<dir>/<name>.pid` says of the last process that took the lock, if anything. */
export interface LockHolder {
  readonly pid: number;
  /** The PID was written in this process's PID namespace, so it can be looked up here. */
  readonly sameNamespace: boolean;
  /** When the file was last written or touched. */
  readonly mtimeMs: number;
}

export function lastHolder(dir: string, name: string): LockHolder | undefined {
  const path = join(dir, `${name}.pid`);
  try {
    const [first, ns] = readFileSync(path, 'utf8').split('\n');
    const pid = Number.parseInt(first ?? '', 10);
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    return { pid, sameNamespace: !ns || ns === pidNamespace(), mtimeMs: statSync(path).mtimeMs };
  } catch {
    return undefined;
  }
}

function tryLock(dir: string, name: string, create = true): DirLock | { pidPath: string } {
  if (create) mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}.lock`);
  const pidPath = join(dir, `${name}.pid`);
  // SQLite's mode=rw opens read-write without creating.
  const db = new DatabaseSync(create ? path : new URL(`${pathToFileURL(path).href}?mode=rw`));
  try {
    db.exec('BEGIN IMMEDIATE');
  } catch (err) {
    db.close();
    if ((err as { errcode?: number }).errcode !== SQLITE_BUSY) throw err;
    return { pidPath };
  }
  held.add(db);
  const tmp = `${pidPath}.${process.pid}`;
  writeFileSync(tmp, `${process.pid}\n${pidNamespace()}\n`);
  renameSync(tmp, pidPath);
  return {
    path,
    release() {
      if (!held.delete(db)) return;
      if (readPid(pidPath) === process.pid) {
        try {
          unlinkSync(pidPath);
        } catch {
          // already gone
        }
      }
      db.close();
    },
  };
}
