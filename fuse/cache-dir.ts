// Where a mount keeps staging files when it is given no --cache-dir. With --write-back the journal
// must outlive the process, so it goes under the user's cache directory, in a folder of its
// endpoint, bucket and prefix; without it, a directory
// of the user's under the system temporary directory. Either way the name is the same at every
// start, so a mount finds and removes what a killed one left (see fs/leftovers.ts).

import { createHash } from 'node:crypto';
import { lstat, mkdir, readdir, stat, statfs } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fsErrors } from './errors.ts';
import type { JournalIdentity } from './fs/journal.ts';
import { canonicalPath } from './mount-table.ts';

/**
 * Where --write-back keeps its journal unless --cache-dir says otherwise: one folder per endpoint,
 * bucket and prefix. The name starts with the bucket and prefix for people, and ends with a hash
 * of all three, so neither two endpoints' buckets of one name nor prefixes that read alike once
 * made file-name safe (`a/b`, `a_b`) share a folder.
 */
export function defaultJournalDir(identity: JournalIdentity): string {
  const readable = legacyJournalName(identity.bucket, identity.prefix).slice(0, 100);
  const hash = createHash('sha256')
    .update(JSON.stringify([identity.endpoint, identity.bucket, identity.prefix]))
    .digest('hex')
    .slice(0, 16);
  return join(cacheBase(), 'estuary', `${readable}-${hash}`);
}

/** The folder name older releases gave the journal: the bucket (and prefix) alone. */
function legacyJournalName(bucket: string, prefix: string): string {
  return prefix ? `${bucket}-${prefix.replace(/[^A-Za-z0-9._-]/g, '_')}` : bucket;
}

function cacheBase(): string {
  return process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache');
}

/**
 * A journal an older release left under its bucket-only default name, if it holds files: they
 * recorded no endpoint, so they are not resumed by a default mount (see SEMANTICS.md).
 */
export async function legacyJournal(bucket: string, prefix: string): Promise<{ dir: string; files: number } | undefined> {
  const dir = join(cacheBase(), 'estuary', legacyJournalName(bucket, prefix));
  const names = await readdir(join(dir, 'journal')).catch(() => [] as string[]);
  const files = names.filter((n) => n.endsWith('.json')).length;
  return files > 0 ? { dir, files } : undefined;
}

/** `<tmp>/estuary-<uid>`, the staging directory without --cache-dir or --write-back. */
export function defaultStagingPath(): string {
  return join(tmpdir(), `estuary-${process.getuid?.() ?? 0}`);
}

/**
 * Refuses a cache directory at or under the mountpoint (`mountpoint` with its symlinks
 * resolved), before anything is created there: the mount would hide it, libfuse would then find
 * the mountpoint not empty, and with --allow-non-empty the staging files would be looked for
 * through the mount itself.
 */
export async function refuseCacheDirInMount(cacheDir: string, mountpoint: string, shown: string, given: boolean) {
  const rel = relative(mountpoint, await canonicalPath(cacheDir));
  if (rel === '' || (rel !== '..' && !rel.startsWith('../') && !isAbsolute(rel))) throw fsErrors.cacheDirInMount(cacheDir, shown, given);
}

/**
 * Makes `dir` (`<tmp>/estuary-<uid>`) private to this user. A name anyone can guess in a shared
 * /tmp could have been made first by someone else, or be a symlink: such a directory is refused.
 */
export async function defaultStagingDir(dir = defaultStagingPath()): Promise<string> {
  const uid = process.getuid?.() ?? 0;
  await mkdir(dir, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw fsErrors.cacheDir(dir, err.message);
  });
  const st = await lstat(dir);
  if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o077) !== 0) {
    throw fsErrors.cacheDir(dir, 'is not a directory private to this user; remove it or pass --cache-dir');
  }
  return dir;
}

/**
 * Below this much free space the mount warns at start: changing an existing file in place needs a
 * local copy of the whole object, and --write-back keeps each closed file until it is uploaded.
 * A gibibyte holds the copies of typical files being edited; less than that is a tmpfs or a
 * full disk, where the first change to a larger object would fail.
 */
export const LOW_FREE_BYTES = 2 ** 30;

/** Bytes an unprivileged writer may still use under `dir`, or undefined if it cannot be told. */
export async function freeBytes(dir: string): Promise<number | undefined> {
  const st = await statfs(dir).catch(() => undefined);
  return st ? st.bavail * st.bsize : undefined;
}

/** SQLite's SQLITE_FULL, from the locks lib/dir-lock.ts takes: they need a few bytes of disk. */
const SQLITE_FULL = 13;

/** The cache directory's file system (or the user's quota there) is full. */
export function isDiskFull(err: unknown): boolean {
  const e = err as { code?: unknown; errcode?: unknown } | undefined;
  return e?.code === 'ENOSPC' || e?.code === 'EDQUOT' || e?.errcode === SQLITE_FULL;
}

/**
 * Makes `dir` and its missing parents, one level at a time. Node's `mkdir(…, { recursive: true })`
 * retries for ever where mkdir answers ENOENT under a parent that exists (/proc, some automounted
 * and pseudo file systems), so the start would spin at full CPU, silent; here such a level, like
 * any other that cannot be made, is refused in one line.
 */
export async function makeCacheDir(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let d = resolve(dir); ; d = dirname(d)) {
    const st = await stat(d).catch((err: NodeJS.ErrnoException) => {
      // ENOTDIR: a file on the way, named as such one level up.
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return undefined;
      throw fsErrors.cacheDir(dir, err.message);
    });
    if (st) {
      if (!st.isDirectory()) throw fsErrors.cacheDir(dir, `${d} is not a directory`);
      break;
    }
    if (dirname(d) === d) break;
    missing.unshift(d);
  }
  for (const d of missing) {
    await mkdir(d, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'EEXIST') return;
      const why = err.code === 'ENOENT' ? `${d} cannot be made there (its file system answers ENOENT)` : err.message;
      throw fsErrors.cacheDir(dir, why);
    });
  }
}
