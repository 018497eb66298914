// One read of the disk tier's index while the store is already in use (a replacement worker
// serves while it reads, gateway/server.ts): how long lookups wait for it, which keys were
// deleted meanwhile (so that the read does not bring them back), how far it has come (so that
// reports count the entries on disk, not only those indexed yet), the entries it found so far
// (the oldest of them make room on a full disk before anything stored since), and what it could
// not read.

import { chargeOf } from './format.ts';
import type { FoundEntry, Unreadable } from './index-scan.ts';

/**
 * A lookup that finds nothing while the index is still being read waits for the read, until this
 * long after the read began: a small cache is read well within it and answers every request as
 * before the restart; a large one is not held up longer, and its misses meanwhile go upstream.
 */
export const INDEX_WAIT_MS = 1000;

export class IndexReading<T = unknown> {
  /** Keys deleted while the read runs (invalidations, purges, other workers' removals), and when. */
  readonly #deleted = new Map<string, number>();
  #done = false;
  /** Resolves when the read is over, whether it succeeded or not. */
  readonly whole: Promise<void>;
  /** Until the read is over or INDEX_WAIT_MS passed: what a lookup that found nothing awaits. */
  #waited: Promise<void> | undefined;
  /** Files listed to be read, and read so far. */
  #listed = 0;
  #read = 0;
  /** Resolves once the files to read are listed (or the read is over). */
  readonly #listedOnce: Promise<void>;
  #markListed!: () => void;
  /** Entries found so far and not yet indexed; sorted newest first while #sorted. */
  #found: FoundEntry[] = [];
  #sorted = true;
  #foundBytes = 0;
  /** Directories and files that could not be read; the whole read failed when `failed` is set. */
  readonly unreadable: Unreadable[] = [];
  failed?: string;

  /** What the read resolves. */
  readonly result: Promise<T>;

  /** Starts `read`, which is handed this reading to report its progress and ask which keys were deleted meanwhile. */
  constructor(read: (reading: IndexReading<T>) => Promise<T>) {
    this.#listedOnce = new Promise((resolve) => (this.#markListed = resolve));
    this.result = Promise.resolve().then(() => read(this));
    this.whole = this.result.then(
      () => undefined,
      (err: unknown) => {
        this.failed = (err as NodeJS.ErrnoException).code ?? String(err);
      },
    );
    void this.whole.then(() => {
      this.#done = true;
      if (this.#rereads === 0) this.#deleted.clear();
      this.#markListed();
    });
    const timeUp = new Promise<void>((resolve) => setTimeout(resolve, INDEX_WAIT_MS).unref());
    this.#waited = Promise.race([this.whole, timeUp]).then(() => {
      this.#waited = undefined;
    });
  }

  /** See DiskStore.indexRead. */
  get waited(): Promise<void> | undefined {
    return this.#waited;
  }

  /** Resolves once the reading knows how many files it has to read. */
  get listedOnce(): Promise<void> {
    return this.#listedOnce;
  }

  listed(files: number): void {
    this.#listed = files;
    this.#markListed();
  }

  fileRead(): void {
    this.#read++;
  }

  /** Files listed and not read yet. */
  get unread(): number {
    return this.#done ? 0 : this.#listed - this.#read;
  }

  /** Entries found and not yet indexed, with the files still to read counted as one entry each. */
  get pending(): number {
    return this.#done ? 0 : this.#found.length + this.unread;
  }

  /** What the entries found and not yet indexed charge against --disk-cache. */
  get foundBytes(): number {
    return this.#done ? 0 : this.#foundBytes;
  }

  found(e: FoundEntry): void {
    this.#found.push(e);
    this.#foundBytes += chargeOf(e.footprint);
    this.#sorted = false;
  }

  /** The oldest entry found and not yet indexed, taken out of the reading (to be evicted). */
  takeOldest(): FoundEntry | undefined {
    if (!this.#sorted) {
      this.#found.sort((a, b) => b.meta.responseTime - a.meta.responseTime);
      this.#sorted = true;
    }
    const e = this.#found.pop();
    if (e) this.#foundBytes -= chargeOf(e.footprint);
    return e;
  }

  /** Every entry found, oldest first, handed over to be indexed. */
  takeAll(): FoundEntry[] {
    const all = this.#found.sort((a, b) => a.meta.responseTime - b.meta.responseTime);
    this.#found = [];
    this.#foundBytes = 0;
    return all;
  }

  /** Paths whose entries this read could not index: `root` itself when it failed whole. */
  unindexed(root: string): string[] {
    return this.failed !== undefined ? [root] : this.unreadable.map((u) => u.path);
  }

  /** Rereads of what could not be read (DiskStore.rereadUnreadable) under way: deletions count for them too. */
  #rereads = 0;

  /** Records deletions until the returned function is called, for a reread that runs after the read. */
  track(): () => void {
    this.#rereads++;
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      if (--this.#rereads === 0 && this.#done) this.#deleted.clear();
    };
  }

  deleted(key: string): void {
    if (!this.#done || this.#rereads > 0) this.#deleted.set(key, Date.now());
  }

  /** Whether an entry the read found, received at `responseTime`, was deleted since. */
  deletedSince(key: string, responseTime: number): boolean {
    const at = this.#deleted.get(key);
    return at !== undefined && responseTime <= at;
  }
}
