// The read of the disk tier's entry files as another program may have left them: first every
// sub-directory is listed (quick: it tells how many files there are to read), then each file's
// trailer is read. Anything that is not a valid entry is skipped or deleted, never indexed; a
// directory or file that cannot be read (EACCES, EIO) is skipped and reported, never deleted, so
// its entries come back once it can be read again.

import { constants as fsc } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { lstat, open, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../lib/log.ts';
import type { IndexReading } from './index-reading.ts';
import { readWrites } from './write-marks.ts';
import type { EntryMeta } from './entry.ts';
import { decodeMeta, decodeTail, type DiskFootprint, footprintOf, TRAILER_FIXED } from './format.ts';

/** An entry file found by the read, with what its trailer says. */
export interface FoundEntry {
  readonly meta: EntryMeta;
  readonly path: string;
  readonly footprint: DiskFootprint;
}

/**
 * Reads the index under `root` into `reading` (which then holds every entry found, and what could
 * not be read), logging what was skipped. Resolves how many files were deleted as no entry.
 */
export async function scanIndex(root: string, reading: IndexReading, log: Logger): Promise<{ discarded: number }> {
  const written = await readWrites(root, Date.now());
  const listing = await listEntryFiles(root, (path) =>
    log.warn({ path }, 'not a regular file or directory where the cache keeps entries; skipped and left alone (remove it)'),
  );
  reading.listed(listing.files.length);
  const read = await readEntries(listing.files, written, {
    found: (e) => reading.found(e),
    done: () => reading.fileRead(),
    foreign: (path) => log.warn({ path }, 'not a regular file where the cache keeps an entry; skipped and left alone (remove it)'),
  });
  reading.unreadable.push(...listing.unreadable, ...read.unreadable);
  warnUnreadable(log, listing.unreadable, read.unreadable);
  if (read.discarded > 0) log.warn({ discarded: read.discarded }, 'discarded unreadable cache files');
  return { discarded: read.discarded };
}

/** A directory or file the read could not read, and the OS error code. */
export interface Unreadable {
  readonly path: string;
  readonly code: string;
}

export interface Listing {
  /** Every file in the two-hex sub-directories, to be read. */
  readonly files: string[];
  /** Sub-directories that could not be listed; their entries are not indexed. */
  readonly unreadable: Unreadable[];
}

/**
 * Lists the regular files of the two-hex sub-directories of `root`. Something else named like a
 * sub-directory (a file, a symbolic link, even to a directory: the read deletes what has no
 * trailer, and must never do so outside the cache) goes to `foreign`, as does anything in a
 * sub-directory that is not a regular file (links, FIFOs, devices, directories), which is never
 * opened. Fails only when `root` itself cannot be read.
 */
async function listEntryFiles(root: string, foreign: (path: string) => void): Promise<Listing> {
  const files: string[] = [];
  const unreadable: Unreadable[] = [];
  for (const sub of await readdir(root, { withFileTypes: true })) {
    if (sub.name === 'tmp' || !/^[0-9a-f]{2}$/.test(sub.name)) continue;
    const dir = join(root, sub.name);
    if (!sub.isDirectory()) {
      foreign(dir);
      continue;
    }
    const listed = await listSub(dir, foreign);
    if (Array.isArray(listed)) files.push(...listed);
    else unreadable.push({ path: dir, code: listed.code });
  }
  return { files, unreadable };
}

/** A sub-directory's regular files (the rest to `foreign`); the error when it cannot be read. */
async function listSub(dir: string, foreign: (path: string) => void): Promise<string[] | { code: string }> {
  try {
    const out: string[] = [];
    for (const d of await readdir(dir, { withFileTypes: true })) {
      if (d.isFile()) out.push(join(dir, d.name));
      else foreign(join(dir, d.name));
    }
    return out;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    return code === 'ENOENT' ? [] : { code };
  }
}

/** What reading the listed files came to, besides the entries handed to `found`. */
export interface ReadOutcome {
  /** Files deleted for want of a valid trailer. */
  readonly discarded: number;
  /** Files that could not be opened or read (left in place). */
  readonly unreadable: Unreadable[];
}

/** Where readEntries reports: each valid entry, each file read, and what is not a regular file. */
export interface ReadSinks {
  found(e: FoundEntry): void;
  done(): void;
  foreign(path: string): void;
}

/**
 * Reads each listed file's trailer and hands every valid entry to `found`. Files without a valid
 * trailer, and entries fetched before a write recorded in `written` (write-marks.ts), are
 * deleted; a file gone meanwhile (replaced by another worker) is passed over; something that is
 * not a regular file (a FIFO, a device, a directory) goes to `foreign` and is left alone. `done`
 * is called after each file.
 */
async function readEntries(files: readonly string[], written: ReadonlyMap<string, number>, to: ReadSinks): Promise<ReadOutcome> {
  const { found, done } = to;
  let discarded = 0;
  const unreadable: Unreadable[] = [];
  for (const path of files) {
    const read = await readTrailer(path);
    done();
    if (read === 'gone') continue;
    if (read === 'foreign') {
      to.foreign(path);
      continue;
    }
    if ('code' in read) {
      unreadable.push({ path, code: read.code });
      continue;
    }
    // Fetched before a write that a worker may have stored without hearing of it (write-marks.ts).
    const replaced = read.meta !== undefined && (written.get(read.meta.key) ?? -Infinity) >= read.meta.requestTime;
    if (read.meta && !replaced) {
      found({ meta: read.meta, path, footprint: read.footprint });
      continue;
    }
    if (!read.meta) discarded++;
    await unlink(path).catch(() => undefined);
  }
  return { discarded, unreadable };
}

type Trailer = { meta: EntryMeta; footprint: DiskFootprint } | { meta: undefined } | { code: string } | 'gone' | 'foreign';

/**
 * The file's entry; no meta when it has no valid trailer; the error when it cannot be read. Listed
 * as a regular file, it may have been replaced since: opened without following a link (ELOOP)
 * and without blocking (a FIFO would hold the read until something writes to it).
 */
async function readTrailer(path: string): Promise<Trailer> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(path, fsc.O_RDONLY | fsc.O_NONBLOCK | fsc.O_NOFOLLOW);
    const st = await fh.stat();
    if (!st.isFile()) return 'foreign';
    const { size } = st;
    if (size < TRAILER_FIXED) return { meta: undefined };
    const tail = Buffer.alloc(TRAILER_FIXED);
    await fh.read(tail, 0, TRAILER_FIXED, size - TRAILER_FIXED);
    const len = decodeTail(tail);
    if (len === undefined || len + TRAILER_FIXED > size) return { meta: undefined };
    const json = Buffer.alloc(len);
    await fh.read(json, 0, len, size - TRAILER_FIXED - len);
    const meta = decodeMeta(json, size);
    return meta ? { meta, footprint: footprintOf(meta, len) } : { meta: undefined };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'gone';
    if (code === 'ELOOP') return 'foreign';
    return { code: code ?? String(err) };
  } finally {
    await fh?.close();
  }
}

/** One line per directory that could not be read; one for all the files. */
function warnUnreadable(log: Logger, dirs: readonly Unreadable[], files: readonly Unreadable[]): void {
  for (const { path, code } of dirs) {
    log.warn(
      { path, code },
      "cannot read a cache directory; its entries are not served, counted or purged until it can be (give the gateway's user read access to it, or remove it)",
    );
  }
  if (files.length > 0) {
    log.warn(
      { files: files.length, path: files[0]!.path, code: files[0]!.code },
      "cannot read cache files; skipped, not served until they can be read (check the disk, give the gateway's user read access, or remove them)",
    );
  }
}

/**
 * Tries again what the read could not read (a purge asks first, after its answer told the admin
 * to give access): the entries of what can be read now go to `found`. Resolves what still cannot
 * be read. `unreadable` is not changed: until the caller has indexed what was found, the paths
 * are still not indexed, and the status page, holdings and purges go on saying so.
 */
export async function rereadUnreadable(
  root: string,
  unreadable: readonly Unreadable[],
  log: Logger,
  found: (e: FoundEntry) => void,
): Promise<Unreadable[]> {
  const written = await readWrites(root, Date.now());
  const foreign = (path: string) => log.warn({ path }, 'not a regular file where the cache keeps an entry; skipped and left alone (remove it)');
  const still: Unreadable[] = [];
  for (const u of [...unreadable]) {
    // What took the path meanwhile is looked at, never followed: a link put in place of an
    // unreadable directory or file must not lead the read (which deletes what has no trailer)
    // out of the cache.
    const kind = await lstat(u.path).then(
      (st) => (st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other'),
      (err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? 'gone' : { code: err.code ?? String(err) }),
    );
    if (kind === 'gone') continue;
    if (kind === 'other') {
      foreign(u.path);
      continue;
    }
    if (typeof kind === 'object') {
      still.push({ path: u.path, code: kind.code });
      continue;
    }
    let files: string[];
    if (kind === 'file') files = [u.path];
    else {
      const listed = await listSub(u.path, foreign);
      if (!Array.isArray(listed)) {
        still.push({ path: u.path, code: listed.code });
        continue;
      }
      files = listed;
    }
    const read = await readEntries(files, written, { found, done: () => undefined, foreign });
    still.push(...read.unreadable);
  }
  return still;
}
