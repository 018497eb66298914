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
 * The least number of requests counted before the counts are halved. The window is ten times the
 * entries the memory tier holds (as Caffeine sizes its sample), so each entry's count reflects
 * several of its own requests, and at least this, so a tier of a few large objects still tells
 * one object in a hundred from one in a thousand. It also bounds the map: at most a window of
 * keys is counted between two halvings.
 */
export const MIN_FREQUENCY_WINDOW = 2000;

/**
 * Keys longer than this are counted under a digest of themselves instead. A window holds up to
 * thousands of keys until it is halved, which on a quiet gateway may be never, and a request
 * target may be 16 KiB: 2,000 of those kept 30 MiB. URLs of real objects are far shorter, so they
 * keep their own exact counts; two long keys that share a digest only share a count.
 */
const LONG_KEY = 256;

/** The map key a request key is counted under: itself, or for a long one its length and FNV-1a hash. */
function slot(key: string): string {
  if (key.length <= LONG_KEY) return key;
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return `\u0000${key.length}:${(h >>> 0).toString(36)}`;
}

interface Count {
  n: number;
  /** The window in which the key was last asked for. */
  seen: number;
}

/**
 * Request counts that halve every window. A key not asked for in the current window or the one
 * before counts as never asked for: an object that was hot before the workload moved on (a large
 * file read by yesterday's jobs) gives way within two windows instead of the many halvings its
 * count would need.
 */
export class Frequency {
  readonly #counts = new Map<string, Count>();
  readonly #window: () => number;
  #samples = 0;
  #epoch = 0;

  constructor(window: () => number = () => MIN_FREQUENCY_WINDOW) {
    this.#window = window;
  }

  /** Counts one request for `key`. */
  touch(key: string): void {
    key = slot(key);
    const c = this.#counts.get(key);
    if (c) {
      c.n++;
      c.seen = this.#epoch;
    } else this.#counts.set(key, { n: 1, seen: this.#epoch });
    if (++this.#samples >= Math.max(2, this.#window())) this.#halve();
  }

  of(key: string): number {
    const c = this.#counts.get(slot(key));
    return c && c.seen >= this.#epoch - 1 ? c.n : 0;
  }

  forget(key: string): void {
    this.#counts.delete(slot(key));
  }

  get size(): number {
    return this.#counts.size;
  }

  #halve(): void {
    this.#epoch++;
    for (const [k, c] of this.#counts) {
      if (c.n < 2 || c.seen < this.#epoch - 1) this.#counts.delete(k);
      else c.n >>= 1;
    }
    this.#samples = 0;
  }
}
