// The disk tier's files: where a body is written and then placed, the trailer rewritten after a
// 304, the start-up scan of entry files as another program may have left them (anything that is
// not a valid entry is skipped or deleted, never indexed), and the probe that the cache directory
// can hold entries at all.

import { randomBytes } from 'node:crypto';
import { constants as fsc } from 'node:fs';
import { type FileHandle, mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { EntryMeta } from './entry.ts';
import {
  decodeMeta,
  decodeTail,
  type DiskFootprint,
  encodeTrailer,
  footprintOf,
  FORMAT_VERSION,
  TRAILER_FIXED,
} from './format.ts';

/** A new file in `tmp` for a body being written, readable and writable by the gateway alone. */
export async function createTempFile(tmp: string): Promise<{ path: string; fh: FileHandle }> {
  const path = join(tmp, randomBytes(12).toString('hex'));
  const fh = await open(path, fsc.O_CREAT | fsc.O_EXCL | fsc.O_RDWR, 0o600);
  return { path, fh };
}

/**
 * Moves a finished temporary file under a fresh name below `root`, in one of 256 sub-directories
 * (each stays small even with millions of entries), and answers its path.
 */
export async function placeEntry(root: string, tempPath: string): Promise<string> {
  const name = randomBytes(16).toString('hex');
  const sub = join(root, name.slice(0, 2));
  await mkdir(sub, { recursive: true });
  const path = join(sub, name);
  await rename(tempPath, path);
  return path;
}

/** Cuts an entry file's trailer off and writes `meta`'s in its place, then fsyncs. */
export async function rewriteTrailer(path: string, meta: EntryMeta): Promise<void> {
  const fh = await open(path, 'r+');
  try {
    await fh.truncate(meta.size);
    const trailer = encodeTrailer(meta);
    await fh.write(trailer, 0, trailer.length, meta.size);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** An entry file found by the scan, with what its trailer says. */
export interface FoundEntry {
  readonly meta: EntryMeta;
  readonly path: string;
  readonly footprint: DiskFootprint;
}

/**
 * Reads every entry file's trailer under `root` (the two-hex sub-directories). Files without a
 * valid trailer, and entries fetched before a write recorded in `written` (write-marks.ts), are
 * deleted; something else named like a sub-directory is reported to `foreign` and skipped.
 */
export async function scanEntries(
  root: string,
  written: ReadonlyMap<string, number>,
  foreign: (path: string) => void,
): Promise<{ found: FoundEntry[]; discarded: number }> {
  const found: FoundEntry[] = [];
  let discarded = 0;
  for (const sub of await readdir(root)) {
    if (sub === 'tmp' || !/^[0-9a-f]{2}$/.test(sub)) continue;
    const names = await readSub(join(root, sub));
    if (!names) {
      foreign(join(root, sub));
      continue;
    }
    for (const name of names) {
      const path = join(root, sub, name);
      const read = await readTrailer(path);
      if (!read) discarded++;
      // Fetched before a write that a worker may have stored without hearing of it (write-marks.ts).
      const replaced = read !== undefined && (written.get(read.meta.key) ?? -Infinity) >= read.meta.requestTime;
      if (read && !replaced) found.push({ meta: read.meta, path, footprint: read.footprint });
      else await unlink(path).catch(() => undefined);
    }
  }
  return { found, discarded };
}

/** A sub-directory's names, or undefined when something else has its name (a file, a dangling link). */
async function readSub(dir: string): Promise<string[] | undefined> {
  try {
    return await readdir(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR' || code === 'ENOENT' || code === 'ELOOP') return undefined;
    throw err;
  }
}

async function readTrailer(path: string): Promise<{ meta: EntryMeta; footprint: DiskFootprint } | undefined> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(path, 'r');
    const { size } = await fh.stat();
    if (size < TRAILER_FIXED) return undefined;
    const tail = Buffer.alloc(TRAILER_FIXED);
    await fh.read(tail, 0, TRAILER_FIXED, size - TRAILER_FIXED);
    const len = decodeTail(tail);
    if (len === undefined || len + TRAILER_FIXED > size) return undefined;
    const json = Buffer.alloc(len);
    await fh.read(json, 0, len, size - TRAILER_FIXED - len);
    const meta = decodeMeta(json, size);
    return meta && { meta, footprint: footprintOf(meta, len) };
  } catch {
    return undefined;
  } finally {
    await fh?.close();
  }
}

/** Fails with the OS error when `dir` cannot hold a cache (missing permission, read-only, full). */
export async function probeWritable(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  // A file in the way of v1/ or v1/tmp/ is found here, as one line, not by the index scan.
  await mkdir(join(dir, `v${FORMAT_VERSION}`, 'tmp'), { recursive: true });
  const probe = join(dir, `.probe-${randomBytes(6).toString('hex')}`);
  const fh = await open(probe, 'w');
  try {
    await fh.write(Buffer.from('ok'));
    await fh.sync();
  } finally {
    await fh.close();
    await unlink(probe).catch(() => undefined);
  }
  await stat(dir);
}
