// How much room the cache's file system has left, read with statfs and trusted briefly, and the
// back-off after the file system said it is full. The --disk-cache bound is the index's job;
// this is about a disk that fills up before it (other users of the disk, a small partition).

import { statfs } from 'node:fs/promises';

/**
 * After the file system said it is full, fills pass through unstored for this long before the
 * next try: long enough that a burst of misses does not each fail a write, short enough that the
 * cache is back soon after an operator frees space.
 */
const FULL_BACKOFF_MS = 10_000;
/** How long one statfs reading of free space is trusted; a miss costs no extra syscall within it. */
const STATFS_TTL_MS = 1000;
/** Room kept free beyond a body's length: its trailer, and other writers on the same disk. */
export const RESERVE_BYTES = 1024 * 1024;
/** Bytes of old entries a write that hit a full disk evicts before it tries once more. */
export const EVICT_ON_FULL = 64 * 1024 * 1024;

export function isDiskFull(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

export class FreeSpace {
  readonly #dir: string;
  #fullUntil = 0;
  #reading?: { readonly at: number; readonly bytes: number };

  constructor(dir: string) {
    this.#dir = dir;
  }

  /** True while writes are not tried because the file system recently said it was full. */
  get full(): boolean {
    return Date.now() < this.#fullUntil;
  }

  markFull(): void {
    this.#fullUntil = Date.now() + FULL_BACKOFF_MS;
    this.#reading = undefined;
  }

  /** Free bytes, from a reading at most STATFS_TTL_MS old; throws when statfs does. */
  async bytes(): Promise<number> {
    const now = Date.now();
    if (this.#reading && now - this.#reading.at < STATFS_TTL_MS) return this.#reading.bytes;
    const st = await statfs(this.#dir);
    const bytes = Number(st.bavail) * Number(st.bsize);
    this.#reading = { at: now, bytes };
    return bytes;
  }

  /** A write of `length` bytes was let through on `free` bytes: the next ones see less. */
  take(free: number, length: number): void {
    this.#reading = { at: this.#reading?.at ?? Date.now(), bytes: free - length };
  }

  /** Files were removed: the next call reads the file system again. */
  changed(): void {
    this.#reading = undefined;
  }
}
