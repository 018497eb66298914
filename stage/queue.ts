// A bounded queue between the lister and the copy workers: the listing streams in page by page
// while files are already copying, and the lister waits whenever the queue is full, so memory
// holds at most `capacity` entries however long the listing is. No I/O.

export class BoundedQueue<T> {
  readonly #capacity: number;
  readonly #items: T[] = [];
  #closed = false;
  /** Workers waiting for an item. */
  #takers: (() => void)[] = [];
  /** The producer waiting for room. */
  #putters: (() => void)[] = [];

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** Resolves once the item is queued; waits while the queue is full. */
  async put(item: T): Promise<void> {
    while (this.#items.length >= this.#capacity && !this.#closed) await new Promise<void>((r) => this.#putters.push(r));
    if (this.#closed) return;
    this.#items.push(item);
    this.#wake(this.#takers);
  }

  /** The next item, or undefined once the queue is closed and empty. */
  async take(): Promise<T | undefined> {
    for (;;) {
      const item = this.#items.shift();
      if (item !== undefined) {
        this.#wake(this.#putters);
        return item;
      }
      if (this.#closed) return undefined;
      await new Promise<void>((r) => this.#takers.push(r));
    }
  }

  /** No more items: takers drain what is queued, then get undefined. */
  close(): void {
    this.#closed = true;
    this.#wake(this.#takers, true);
    this.#wake(this.#putters, true);
  }

  /** Stops everything: queued items are dropped, takers get undefined, the producer returns. */
  abandon(): void {
    this.#items.length = 0;
    this.close();
  }

  get length(): number {
    return this.#items.length;
  }

  #wake(list: (() => void)[], all = false): void {
    const n = all ? list.length : Math.min(1, list.length);
    for (const r of list.splice(0, n)) r();
  }
}
