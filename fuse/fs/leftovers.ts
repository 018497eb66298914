// What a mount that died (kill -9, a crash, power loss) leaves behind, and how the next start
// cleans it up. Two kinds:
//  - staging files on local disk. Each mount process keeps its own in `<cache-dir>/staging-<id>`
//    and holds a kernel lock on `<cache-dir>/staging-<id>.lock` for as long as it runs (see
//    lib/dir-lock.ts and held-lock.ts); a start removes the directories whose lock it can take, and
//    leaves those of a mount still running on the same cache directory alone. A PID would not do:
//    a mount in a container, `unshare -p` or a Slurm job container that shares the directory (or
//    /tmp) numbers processes differently, and took a running mount for dead. The lock is held by
//    the kernel on the file, whichever namespace the holder runs in, and drops when it dies however
//    it dies. A directory whose lock file is missing is left alone: the file was removed by hand or
//    by a cleaner, and its owner may still run, holding the removed file (a new one made here
//    would be free, and prove nothing).
//  - multipart uploads that were started and neither completed nor aborted. They are invisible in
//    listings but billed by AWS until aborted. Which ones are ours cannot be known after a crash
//    (the upload ids died with the process), so those under the mount's prefix older than a
//    configurable age are aborted: old enough that no live writer on any host still feeds them.
//
// Only what a mount made is removed: files named like staging files (staging-file.ts), and the
// directory once they leave it empty. A folder of the user's that happens to be called
// `staging-<number>` keeps whatever else it holds.

import { randomBytes } from 'node:crypto';
import { lstat, readdir, readFile, rm, rmdir, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { ObjectClient, PendingUpload } from '../s3/object-client.ts';
import { uploadGone } from '../s3/s3-errors.ts';
import { type DirLock, lockDirSync } from '../../lib/dir-lock.ts';
import { pidAlive } from '../../lib/pid.ts';
import { holdLock, runningHolder } from './held-lock.ts';
import { isStagingFileName } from './staging-file.ts';

/** `staging-<pid>-<8 hex>`: the PID for people, the random part so no two mounts share a name. */
const STAGING_DIR = /^staging-\d+-[0-9a-f]{8}$/;
/** Older releases named the directory by PID alone and held no lock: judged by the PID. */
const LEGACY_STAGING_DIR = /^staging-(\d+)$/;

/** A new staging directory name under `cacheDir`, unique to this process and call. */
export function newStagingDir(cacheDir: string): string {
  return join(cacheDir, `staging-${process.pid}-${randomBytes(4).toString('hex')}`);
}

export interface StagingClaim {
  /** Gives up the lock and removes the lock's files; call after the directory is removed. */
  release(): Promise<void>;
}

async function dropLock(lock: DirLock): Promise<void> {
  lock.release();
  // SQLite's rollback journal beside it is gone after a release, but not after kill -9.
  await rm(lock.path, { force: true });
  await rm(`${lock.path}-journal`, { force: true });
}

/**
 * Locks `dir` (a name from newStagingDir) for this process. Call before the directory is made: a
 * start that sees a staging directory can then always find its owner's lock held. A lock that
 * cannot be taken (a full file system: SQLite needs a few bytes for it) fails the start, since a
 * directory without one would be taken for a dead mount's by the next start.
 */
export function claimStaging(dir: string): StagingClaim {
  // The directory is touched with the lock: empty while nothing is changed in place, it would
  // otherwise age like any other under /tmp (staging-file.ts also makes it again if removed).
  const lock = holdLock(dirname(dir), basename(dir), { guards: dir });
  return { release: () => dropLock(lock) };
}

/**
 * The lock, or undefined when another process holds it, it cannot be taken here, or its file is
 * missing (see the file comment).
 */
function tryLock(dir: string, name: string): DirLock | undefined {
  try {
    return lockDirSync(dir, name, { create: false });
  } catch {
    return undefined;
  }
}

export interface RemovedStaging {
  readonly dirs: readonly string[];
  readonly files: number;
  readonly bytes: number;
}

/** Whether the mount that made staging directory `name` no longer runs; takes its lock if so. */
function ownerGone(cacheDir: string, name: string): { lock?: DirLock } | undefined {
  const legacy = LEGACY_STAGING_DIR.exec(name);
  if (legacy) {
    const pid = Number(legacy[1]);
    return pid === process.pid || pidAlive(pid) ? undefined : {};
  }
  if (!STAGING_DIR.test(name)) return undefined;
  // Held (by a running mount, here or in another PID namespace), or not lockable here: leave it.
  // Read once, without lockDir's wait for the holder's PID: it is not needed, and a holder in
  // another PID namespace never shows a live one. A PID file that names a running holder leaves
  // it alone too: its owner may be re-taking a lock file that was removed (held-lock.ts).
  if (runningHolder(cacheDir, name)) return undefined;
  const lock = tryLock(cacheDir, name);
  return lock ? { lock } : undefined;
}

/** Removes the staging directories of mount processes that no longer run. */
export async function removeDeadStaging(cacheDir: string): Promise<RemovedStaging> {
  const dirs: string[] = [];
  let files = 0;
  let bytes = 0;
  const names = await readdir(cacheDir).catch(() => [] as string[]);
  for (const name of names) {
    const dir = join(cacheDir, name);
    if (!(await lstat(dir).catch(() => undefined))?.isDirectory()) continue;
    const gone = ownerGone(cacheDir, name);
    if (!gone) continue;
    const removed = await removeStagingFiles(dir);
    // An empty folder is removed only where a lock (or a staging file) says the mount made it.
    const emptied = (gone.lock !== undefined || removed.files > 0) && (await rmdir(dir).then(() => true, () => false));
    if (gone.lock) {
      if (emptied) await dropLock(gone.lock);
      else gone.lock.release();
    }
    if (removed.files === 0 && !emptied) continue;
    files += removed.files;
    bytes += removed.bytes;
    dirs.push(dir);
  }
  await removeOrphanLocks(cacheDir, names);
  return { dirs, files, bytes };
}

/**
 * The lock files of staging directories that are gone, left by a kill -9 between the removal of
 * a directory and the release of its lock. A live mount's lock is held (its directory is only
 * made after it is locked, and made again if removed), so it is not taken here.
 */
async function removeOrphanLocks(cacheDir: string, names: readonly string[]): Promise<void> {
  const present = new Set(names);
  for (const file of names) {
    const name = file.endsWith('.lock') ? file.slice(0, -'.lock'.length) : '';
    if (!STAGING_DIR.test(name) || present.has(name) || runningHolder(cacheDir, name)) continue;
    const lock = tryLock(cacheDir, name);
    if (lock && !(await lstat(join(cacheDir, name)).catch(() => undefined))) await dropLock(lock);
    else lock?.release();
  }
}

/** Unlinks the regular files in `dir` named like staging files; what else is there stays. */
async function removeStagingFiles(dir: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  for (const f of await readdir(dir).catch(() => [] as string[])) {
    const path = join(dir, f);
    const st = await lstat(path).catch(() => undefined);
    if (!st?.isFile() || !isStagingFileName(f)) continue;
    await unlink(path).catch(() => undefined);
    files++;
    bytes += st.size;
  }
  return { files, bytes };
}

/**
 * The live process an older release's journal lock names. Such a release locked the journal with
 * a file holding its PID, and refused a second mount while that PID ran: an upgrade with the old
 * mount still running must not take the journal from under it. Judged by the PID, as its
 * `staging-<pid>` directories are.
 */
export async function legacyLockHolder(path: string): Promise<number | undefined> {
  const st = await lstat(path).catch(() => undefined);
  if (!st?.isFile()) return undefined;
  const pid = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10);
  return Number.isInteger(pid) && pid > 0 && pid !== process.pid && pidAlive(pid) ? pid : undefined;
}

/**
 * Aborts the unfinished multipart uploads under `prefix` started more than `ageMs` before `now`:
 * those aborted (or already gone), and those the server did not take, left to a later start.
 */
export async function abortStaleUploads(
  client: ObjectClient,
  prefix: string,
  ageMs: number,
  now?: number,
): Promise<{ aborted: PendingUpload[]; refused: PendingUpload[] }> {
  const listed = await client.listUploads(prefix);
  // The store dates the uploads: their age is told by its clock (a host an hour ahead would take
  // another host's upload of a minute ago for one of an hour and a minute). Its Date is to the
  // second, so where the two clocks agree within that, this host's tells it finer.
  const store = client.storeNow?.();
  const at = now ?? (store !== undefined && Math.abs(store - Date.now()) > 2000 ? store : Date.now());
  const stale = listed.filter((u) => u.initiated.getTime() <= at - ageMs);
  const aborted: PendingUpload[] = [];
  const refused: PendingUpload[] = [];
  for (const u of stale) {
    const ok = await client.abortMultipart(u.key, u.uploadId).then(
      () => true,
      (err: unknown) => uploadGone(err),
    );
    (ok ? aborted : refused).push(u);
  }
  return { aborted, refused };
}
