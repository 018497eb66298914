// How often each key was asked for lately, for the memory tier's admission (memory-store.ts).
// Pure.
//
// A plain LRU memory tier thrashes when the objects asked for add up to more than it holds: every
// read from disk copies the object into memory and pushes out another that is just as likely to
// be asked for next, so the tier keeps allocating and discarding buffers (and the collector runs
// after them) while the hit rate stays where it was. TinyLFU's answer (Einziger, Friedman and
// Manes, 2017) is to admit a newcomer only when it has been asked for more often than what it
// would push out. The counts here age the same way: once the window's worth of requests has been
// counted, every count is halved, so yesterday's favourite does not hold its place forever.

/**
 * Requests counted before the counts are halved. Ten times the objects a memory tier of a few
 * hundred MiB holds at CVMFS sizes: long enough to tell one object in a hundred from one in a
 * thousand, short enough to follow a workload within a minute at a few hundred requests a second.
 * It also bounds the map: at most this many keys are counted between two halvings.
 */
export const FREQUENCY_WINDOW = 20_000;

export class Frequency {
  readonly #counts = new Map<string, number>();
  readonly #window: number;
  #samples = 0;

  constructor(window = FREQUENCY_WINDOW) {
    this.#window = Math.max(2, window);
  }

  /** Counts one request for `key`. */
  touch(key: string): void {
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
    if (++this.#samples >= this.#window) this.#halve();
  }

  of(key: string): number {
    return this.#counts.get(key) ?? 0;
  }

  forget(key: string): void {
    this.#counts.delete(key);
  }

  get size(): number {
    return this.#counts.size;
  }

  #halve(): void {
    for (const [k, n] of this.#counts) {
      if (n < 2) this.#counts.delete(k);
      else this.#counts.set(k, n >> 1);
    }
    this.#samples = this.#samples >> 1;
  }
}
