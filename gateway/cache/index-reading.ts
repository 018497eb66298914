// One read of the disk tier's index while the store is already in use (a replacement worker
// serves while it reads, gateway/server.ts): how long lookups wait for it, and which keys were
// deleted meanwhile, so that the read does not bring them back.

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

  /** What the read resolves. */
  readonly result: Promise<T>;

  /** Starts `read`, which is handed this reading to ask which keys were deleted meanwhile. */
  constructor(read: (reading: IndexReading<T>) => Promise<T>) {
    this.result = Promise.resolve().then(() => read(this));
    this.whole = this.result.then(
      () => undefined,
      () => undefined,
    );
    void this.whole.then(() => {
      this.#done = true;
      this.#deleted.clear();
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

  deleted(key: string): void {
    if (!this.#done) this.#deleted.set(key, Date.now());
  }

  /** Whether an entry the read found, received at `responseTime`, was deleted since. */
  deletedSince(key: string, responseTime: number): boolean {
    const at = this.#deleted.get(key);
    return at !== undefined && responseTime <= at;
  }
}
