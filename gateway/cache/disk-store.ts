// The disk tier: one file per entry (gateway/cache/format.ts) under <cache-dir>/v1/, an in-memory
// index rebuilt from the files' trailers at start-up, and byte-bounded LRU eviction.
//
// Crash safety: a body is written to <cache-dir>/v1/tmp/, the trailer appended, the file fsynced
// and only then renamed to its final name; tmp/ is emptied at start-up. Each stored version gets
// a fresh file name, so replacing an entry never overwrites a file a reader still streams from;
// the old file is unlinked (open readers keep their descriptor). A kill -9 at any moment leaves
// either the old entry, the new one, or nothing — never a partial body under a servable name.

import { mkdir, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../../lib/log.ts';
import type { EntryMeta } from './entry.ts';
import {
  chargeOf,
  type DiskFootprint,
  diskCharge,
  encodeTrailer,
  FORMAT_VERSION,
  footprintOf,
  TRAILER_FIXED,
} from './format.ts';
import { CacheTotals } from './totals.ts';
import { appendTrailer, createTempFile, placeEntry, rewriteTrailer } from './disk-files.ts';
import { mergeFound } from './index-merge.ts';
import { EVICT_ON_FULL, FreeSpace, RESERVE_BYTES } from './free-space.ts';
import { IndexReading } from './index-reading.ts';
import { type FoundEntry, rereadUnreadable, scanIndex } from './index-scan.ts';
import type { DiskEntry, LoadResult, Reservation, TempFile } from './disk-types.ts';

export { probeWritable } from './disk-files.ts';
export { EVICT_ON_FULL, isDiskFull } from './free-space.ts';
export type { DiskEntry, LoadResult, Reservation, TempFile } from './disk-types.ts';
export { INDEX_WAIT_MS } from './index-reading.ts';

export class DiskStore {
  readonly root: string;
  readonly #tmp: string;
  readonly #log: Logger;
  readonly #index: LRUCache<string, DiskEntry>;
  /** What the index holds, per repository, prefix and object size, kept as entries come and go. */
  readonly totals = new CacheTotals();
  /** Set while forgetting an entry another process already removed: its file is not ours to unlink. */
  #keepFiles = false;
  /** Called when LRU eviction removed an entry (other processes then forget it too). */
  onEvict?: (key: string, path: string) => void;
  /** Called with the file of every entry that leaves the index, for whatever reason. */
  onGone?: (path: string) => void;
  /** Entries removed to make room since start, by this process. */
  evictions = 0;
  /** What the index holds in memory in this process (format.ts, footprintOf), summed. */
  #indexBytes = 0;
  readonly #space: FreeSpace;
  /** Blocks that fills of announced length in this process are writing to tmp/ (reserve). */
  #reserved = 0;
  /** A purge's second read of what the index read could not read, while it runs. */
  #rereading?: Promise<void>;
  /** The read of the index under way or last made (index-reading.ts). */
  #reading?: IndexReading<LoadResult>;

  constructor(dir: string, maxBytes: number, log: Logger) {
    this.root = join(dir, `v${FORMAT_VERSION}`);
    this.#tmp = join(this.root, 'tmp');
    this.#log = log;
    this.#space = new FreeSpace(this.#tmp);
    this.#index = new LRUCache<string, DiskEntry>({
      maxSize: Math.max(1, maxBytes),
      // The file in whole blocks, trailer included, so --disk-cache bounds what the disk holds,
      // and never less than a weight of what the entry holds in memory (format.ts, chargeOf).
      sizeCalculation: (e) => chargeOf(footprint(e)),
      // Every dispose (eviction, delete, replacement) removes that version's own file.
      dispose: (e, key, reason) => {
        this.totals.remove(e.meta);
        this.#indexBytes -= footprint(e).indexBytes;
        this.onGone?.(e.path);
        if (this.#keepFiles) return;
        unlink(e.path).catch(() => undefined);
        if (reason === 'evict') {
          this.evictions++;
          this.onEvict?.(key, e.path);
        }
      },
    });
  }

  get maxObject(): number {
    return this.#index.maxSize;
  }

  /** Removes leftovers of interrupted writes. With several workers the primary does it, once. */
  async cleanTemp(): Promise<void> {
    await rm(this.#tmp, { recursive: true, force: true });
    await mkdir(this.#tmp, { recursive: true });
  }

  /** Creates the directories, removes leftovers of interrupted writes, rebuilds the index. */
  async open(cleanTemp = true): Promise<LoadResult> {
    await this.prepare(cleanTemp);
    return this.load();
  }

  /** Creates the directories and (unless another process did) removes leftovers of interrupted writes. */
  async prepare(cleanTemp = true): Promise<void> {
    await mkdir(this.#tmp, { recursive: true });
    if (cleanTemp) await this.cleanTemp();
  }

  /**
   * Rebuilds the index from the entry files' trailers. The store may be in use meanwhile (a
   * replacement worker serves while it reads): a key stored or adopted since is newer than what
   * the scan found for it, and keeps its entry; a key deleted since stays deleted.
   */
  async load(): Promise<LoadResult> {
    const reading = new IndexReading<LoadResult>((r) => this.#readIndex(r));
    this.#reading = reading;
    return reading.result;
  }

  /**
   * Undefined once the index is read (or no longer waited for); until then, what a lookup that
   * found nothing awaits before it looks again.
   */
  indexRead(): Promise<void> | undefined {
    return this.#reading?.waited;
  }

  /** Resolves once the index is read whole (at once when no read is under way). */
  whenRead(): Promise<void> {
    return this.#reading?.whole ?? Promise.resolve();
  }

  async #readIndex(reading: IndexReading): Promise<LoadResult> {
    const { discarded } = await scanIndex(this.root, reading, this.#log);
    this.#merge(reading.takeAll(), reading);
    return { entries: this.#index.size, bytes: this.#index.calculatedSize, discarded };
  }

  #merge(found: readonly FoundEntry[], reading: IndexReading): void {
    mergeFound(
      {
        oldestFirst: () => [...this.#index.rvalues()].filter((e): e is DiskEntry => e !== undefined),
        drop: (key) => this.#drop(key),
        put: (e) => this.#put(e),
        removeFile: (path) => void unlink(path).catch(() => undefined),
      },
      found,
      (key, at) => reading.deletedSince(key, at),
    );
  }

  get(key: string): DiskEntry | undefined {
    return this.#index.get(key);
  }

  peek(key: string): DiskEntry | undefined {
    return this.#index.peek(key);
  }

  createTemp(): Promise<TempFile> {
    return createTempFile(this.#tmp);
  }

  /**
   * Appends the trailer, fsyncs, renames into place and indexes the entry. Closes the handle. A
   * full disk at the trailer costs our oldest entries once, as a body write does (fetcher.ts);
   * failing again, the disk is marked full and the error (isDiskFull) goes to the caller, which
   * still has the whole body in the temporary file.
   */
  async commit(temp: TempFile, meta: EntryMeta): Promise<DiskEntry> {
    const trailer = encodeTrailer(meta);
    try {
      await appendTrailer(temp.fh, trailer, meta.size, {
        make: () => this.evictBytes(EVICT_ON_FULL + trailer.length),
        full: () => this.markFull(),
      });
    } finally {
      await temp.fh.close().catch(() => undefined);
    }
    const path = await placeEntry(this.root, temp.path);
    const entry: DiskEntry = { meta, path, footprint: footprintOf(meta, trailer.length - TRAILER_FIXED) };
    if (!this.#put(entry)) await unlink(path).catch(() => undefined);
    return entry;
  }

  async abort(temp: TempFile): Promise<void> {
    await temp.fh.close().catch(() => undefined);
    await unlink(temp.path).catch(() => undefined);
  }

  /**
   * Replaces an entry's metadata (after a 304). The trailer is cut off and written again; a crash
   * in between leaves a file without a valid trailer, which start-up discards — the entry is lost,
   * never misread.
   */
  async updateMeta(entry: DiskEntry, meta: EntryMeta): Promise<void> {
    await rewriteTrailer(entry.path, meta);
    const current = this.#index.peek(meta.key);
    if (current && current.path === entry.path) this.#setMeta(current, meta);
  }

  /**
   * Holds room for a body of `length` bytes while it is written to tmp/, evicting old entries so
   * that the entries and the bodies being written stay within --disk-cache together. Undefined
   * when the body cannot be kept, alone or beside the bodies already being written: it then
   * passes through without being written at all.
   */
  reserve(length: number): Reservation | undefined {
    const charge = diskCharge(length);
    if (this.#reserved + charge > this.#index.maxSize) return undefined;
    this.#reserved += charge;
    this.#trim();
    let held = true;
    return {
      release: () => {
        if (held) this.#reserved -= charge;
        held = false;
      },
    };
  }

  /** Evicts least recently used entries until they and the reserved bodies fit. */
  #trim(): void {
    while (this.#index.size > 0 && this.#index.calculatedSize + this.#reserved > this.#index.maxSize) this.#index.pop();
  }

  delete(key: string): boolean {
    this.#reading?.deleted(key);
    return this.#index.delete(key);
  }

  /** True while writes are not tried because the file system recently said it was full. */
  get full(): boolean {
    return this.#space.full;
  }

  markFull(): void {
    this.#space.markFull();
  }

  /**
   * Evicts least recently used entries until `bytes` are freed or none is left, and resolves with
   * the bytes freed once their files are gone, so a write retried after it finds the room.
   */
  async evictBytes(bytes: number): Promise<number> {
    const gone: DiskEntry[] = [];
    let freed = 0;
    this.#keepFiles = true;
    try {
      while (freed < bytes) {
        // While the index is read, what it found so far predates everything the index holds.
        const e = this.#reading?.takeOldest() ?? this.#index.pop();
        if (!e) break;
        freed += diskCharge(footprint(e).fileBytes);
        gone.push(e);
      }
    } finally {
      this.#keepFiles = false;
    }
    await Promise.all(gone.map((e) => unlink(e.path).catch(() => undefined)));
    this.evictions += gone.length;
    for (const e of gone) this.onEvict?.(e.meta.key, e.path);
    this.#space.changed();
    return freed;
  }

  /**
   * Whether a body of `length` bytes fits on the file system (the --disk-cache bound is LRU's
   * job; this is about a disk that fills up before it). Evicts our own entries to make room.
   */
  async ensureRoom(length: number): Promise<boolean> {
    if (this.full) return false;
    let free: number;
    try {
      free = await this.#space.bytes();
    } catch {
      return true; // cannot tell: let the write itself find out
    }
    const need = length + RESERVE_BYTES;
    if (free >= need) {
      this.#space.take(free, length);
      return true;
    }
    if (free + (await this.evictBytes(need - free)) >= need) return true;
    this.markFull();
    return false;
  }

  /** Indexes an entry another process stored. */
  adopt(entry: DiskEntry): void {
    this.#put(entry);
  }

  /** Drops an entry another process removed (its file is already gone or theirs to remove). */
  forget(key: string, path?: string): void {
    this.#reading?.deleted(key);
    const current = this.#index.peek(key);
    if (!current || (path !== undefined && current.path !== path)) return;
    this.#drop(key);
  }

  /** Takes `key` out of the index, leaving its file alone. */
  #drop(key: string): void {
    this.#keepFiles = true;
    try {
      this.#index.delete(key);
    } finally {
      this.#keepFiles = false;
    }
  }

  /** Takes over metadata another process rewrote after a 304. */
  replaceMeta(meta: EntryMeta): void {
    const current = this.#index.peek(meta.key);
    if (current) this.#setMeta(current, meta);
  }

  /**
   * Indexes an entry and counts it in the totals (the index's dispose uncounts what it drops).
   * False when it is larger than the whole tier, and so not indexed.
   */
  #put(entry: DiskEntry): boolean {
    // The same file again (a relayed store the read already indexed): replacing it would unlink it.
    if (this.#index.peek(entry.meta.key)?.path === entry.path) return true;
    if (chargeOf(footprint(entry)) > this.#index.maxSize) return false;
    this.#index.set(entry.meta.key, entry);
    this.#trim();
    if (this.#index.peek(entry.meta.key) !== entry) return false;
    this.totals.add(entry.meta);
    this.#indexBytes += footprint(entry).indexBytes;
    return true;
  }

  /**
   * New metadata changes the trailer's length, so the entry is indexed again to be charged anew
   * (lru-cache keeps the size it first calculated when the same value is set again).
   */
  #setMeta(entry: DiskEntry, meta: EntryMeta): void {
    this.#drop(meta.key);
    (entry as { meta: EntryMeta }).meta = meta;
    entry.footprint = footprintOf(meta);
    if (!this.#put(entry)) unlink(entry.path).catch(() => undefined);
  }

  keys(): IterableIterator<string> {
    return this.#index.keys();
  }

  values(): IterableIterator<DiskEntry> {
    return this.#index.values();
  }

  get bytes(): number {
    return this.#index.calculatedSize;
  }

  get count(): number {
    return this.#index.size;
  }

  /** What the index holds in memory in this process, estimated (format.ts, footprintOf). */
  get indexBytes(): number {
    return this.#indexBytes;
  }

  /**
   * What the disk holds, for reports: the index, and while it is read also the entries found
   * and not indexed yet and (one entry each) the files still to read, whose bytes are not known
   * yet. `unread` counts those files and entries: 0 once the index is whole.
   */
  get held(): { objects: number; bytes: number; unread: number } {
    const pending = this.#reading?.pending ?? 0;
    const unread = this.#reading?.unread ?? 0;
    return { objects: this.count + pending, bytes: this.bytes + (this.#reading?.foundBytes ?? 0), unread };
  }

  /** Resolves once a read under way knows how many files it has to read (at once without one). */
  listed(): Promise<void> {
    return this.#reading?.listedOnce ?? Promise.resolve();
  }

  /**
   * Reads again what the index read could not, and indexes what it can read now (see
   * rereadUnreadable), once the read is over; a caller that comes while it runs waits for that
   * one, so a purge sent meanwhile finds what it indexed. Keys deleted meanwhile stay deleted.
   */
  rereadUnreadable(): Promise<void> {
    const reading = this.#reading;
    if (!reading || (reading.unreadable.length === 0 && !this.#rereading)) return Promise.resolve();
    this.#rereading ??= (async () => {
      await reading.whole;
      const release = reading.track();
      try {
        const found: FoundEntry[] = [];
        const still = await rereadUnreadable(this.root, reading.unreadable, this.#log, (e) => found.push(e));
        if (found.length > 0) this.#merge(found, reading);
        reading.unreadable.splice(0, reading.unreadable.length, ...still);
      } finally {
        release();
      }
    })().finally(() => {
      this.#rereading = undefined;
    });
    return this.#rereading;
  }

  /** What the last read of the index could not read (the whole v1/ when it failed), so its entries are not indexed. */
  get unindexed(): string[] {
    return this.#reading?.unindexed(this.root) ?? [];
  }
}

function footprint(e: DiskEntry): DiskFootprint {
  e.footprint ??= footprintOf(e.meta);
  return e.footprint;
}
