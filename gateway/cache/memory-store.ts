// The memory tier: small hot objects, bounded in bytes, least recently used out first.

import { LRUCache } from 'lru-cache';
import type { EntryMeta } from './entry.ts';

export interface MemoryEntry {
  readonly meta: EntryMeta;
  readonly body: Buffer;
}

/** Bookkeeping per entry besides the body (metadata, map slots), roughly. */
const ENTRY_OVERHEAD = 1024;
/**
 * Characters of the key and of the URL that ENTRY_OVERHEAD already covers. A request target may be
 * 16 KiB, and an entry keeps both strings: beyond this, each character counts two bytes (an upper
 * bound), or a tier of tiny objects under long URLs would hold some 30 times its size.
 */
const COVERED_CHARS = 256;

function stringBytes(s: string): number {
  return 2 * Math.max(0, s.length - COVERED_CHARS);
}

/** What an entry costs besides its body. */
function overheadOf(meta: EntryMeta): number {
  return ENTRY_OVERHEAD + stringBytes(meta.key) + stringBytes(meta.url);
}
/**
 * What serving one request from disk costs beyond its bytes (open, a read's trip through the
 * thread pool, close), counted as this many bytes of copying: a small object asked for as often as
 * a large one is worth more memory per byte.
 */
const REQUEST_COST_BYTES = 64 * 1024;
/**
 * How much more a newcomer must be worth than what it pushes out. The counts are samples: objects
 * asked for equally often show counts a few tens of percent apart, and swapping one for another
 * costs a read and a fresh buffer each time without raising the hit rate.
 */
const ADMISSION_MARGIN = 1.5;

export class MemoryStore {
  readonly #lru: LRUCache<string, MemoryEntry>;
  readonly maxObject: number;
  /** The overheads of the entries held, so that `bytes` is their bodies alone. */
  #overheads = 0;

  constructor(maxBytes: number, maxObject: number) {
    this.maxObject = Math.min(maxObject, Math.max(1, maxBytes - ENTRY_OVERHEAD));
    this.#lru = new LRUCache<string, MemoryEntry>({
      maxSize: Math.max(1, maxBytes),
      sizeCalculation: (e) => e.body.length + overheadOf(e.meta),
      dispose: (e) => {
        this.#overheads -= overheadOf(e.meta);
      },
    });
  }

  get(key: string): MemoryEntry | undefined {
    return this.#lru.get(key);
  }

  set(entry: MemoryEntry): void {
    if (entry.body.length > this.maxObject) return;
    const key = entry.meta.key;
    const again = this.#lru.peek(key) === entry;
    this.#lru.set(key, entry);
    // Not kept when it is larger than the whole tier; counted once when set twice.
    if (!again && this.#lru.peek(key) === entry) this.#overheads += overheadOf(entry.meta);
  }

  /**
   * Whether an object of `size` bytes asked for `freq(key)` times should take its place here:
   * yes when it fits without pushing anything out (or replaces its own older version), else only
   * when it was asked for more than the least recently used entries it would push out, weighed by
   * the disk reads each saves (frequency.ts).
   */
  admits(key: string, size: number, freq: (key: string) => number): boolean {
    if (size > this.maxObject) return false;
    // The URL is about as long as the key.
    const need = size + ENTRY_OVERHEAD + 2 * stringBytes(key);
    let room = this.#lru.maxSize - this.#lru.calculatedSize;
    if (room >= need || this.#lru.has(key)) return true;
    const gain = freq(key) * (size + REQUEST_COST_BYTES);
    let loss = 0;
    for (const victim of this.#lru.rvalues()) {
      if (!victim) continue;
      loss += freq(victim.meta.key) * (victim.body.length + REQUEST_COST_BYTES);
      if (loss * ADMISSION_MARGIN >= gain) return false;
      room += victim.body.length + overheadOf(victim.meta);
      if (room >= need) return true;
    }
    return true;
  }

  delete(key: string): boolean {
    return this.#lru.delete(key);
  }

  keys(): IterableIterator<string> {
    return this.#lru.keys();
  }

  values(): IterableIterator<MemoryEntry> {
    return this.#lru.values();
  }

  get bytes(): number {
    return this.#lru.calculatedSize - this.#overheads;
  }

  get count(): number {
    return this.#lru.size;
  }
}
