// The disk tier's files: where a body is written and then placed, the trailer rewritten after a
// 304, and the probe that the cache directory can hold entries at all. The read of the entry
// files at start-up is index-scan.ts.

import { randomBytes } from 'node:crypto';
import { constants as fsc } from 'node:fs';
import { type FileHandle, mkdir, open, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { EntryMeta } from './entry.ts';
import { encodeTrailer, FORMAT_VERSION } from './format.ts';
import { isDiskFull } from './free-space.ts';

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

/** How entry files are opened: never through a symbolic link, never waiting on a FIFO. */
export const ENTRY_OPEN = fsc.O_NOFOLLOW | fsc.O_NONBLOCK;

/**
 * Opens a stored entry's file (for reading, or with `fsc.O_RDWR`) as what it must be, a regular
 * file: never through a symbolic link put in its place (ELOOP), never waiting on a FIFO (opened
 * without blocking, then refused). Answers the handle and its size and inode.
 */
export async function openEntryFile(path: string, mode = fsc.O_RDONLY): Promise<{ fh: FileHandle; size: number; ino: number }> {
  const fh = await open(path, mode | ENTRY_OPEN);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw Object.assign(new Error(`${path} is not a regular file`), { code: 'EFTYPE' });
    return { fh, size: st.size, ino: st.ino };
  } catch (err) {
    await fh.close().catch(() => undefined);
    throw err;
  }
}

/**
 * Writes a new entry's trailer at `at` and fsyncs. On a full disk `room.make` is asked once
 * (answering the bytes it freed) and the write tried again; when nothing was freed or the disk is
 * full again, `room.full` is told and the error goes to the caller.
 */
export async function appendTrailer(
  fh: FileHandle,
  trailer: Buffer,
  at: number,
  room: { make(): Promise<number>; full(): void },
): Promise<void> {
  for (let tried = false; ; tried = true) {
    try {
      await fh.write(trailer, 0, trailer.length, at);
      await fh.sync();
      return;
    } catch (err) {
      if (!isDiskFull(err)) throw err;
      if (tried || (await room.make()) === 0) {
        room.full();
        throw err;
      }
      await fh.truncate(at).catch(() => undefined);
    }
  }
}

/** Cuts an entry file's trailer off and writes `meta`'s in its place, then fsyncs. */
export async function rewriteTrailer(path: string, meta: EntryMeta): Promise<void> {
  const { fh } = await openEntryFile(path, fsc.O_RDWR);
  try {
    await fh.truncate(meta.size);
    const trailer = encodeTrailer(meta);
    await fh.write(trailer, 0, trailer.length, meta.size);
    await fh.sync();
  } finally {
    await fh.close();
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
