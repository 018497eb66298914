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

  constructor(maxBytes: number, maxObject: number) {
    this.maxObject = Math.min(maxObject, Math.max(1, maxBytes - ENTRY_OVERHEAD));
    this.#lru = new LRUCache<string, MemoryEntry>({
      maxSize: Math.max(1, maxBytes),
      sizeCalculation: (e) => e.body.length + ENTRY_OVERHEAD,
    });
  }

  get(key: string): MemoryEntry | undefined {
    return this.#lru.get(key);
  }

  set(entry: MemoryEntry): void {
    if (entry.body.length > this.maxObject) return;
    this.#lru.set(entry.meta.key, entry);
  }

  /**
   * Whether an object of `size` bytes asked for `freq(key)` times should take its place here:
   * yes when it fits without pushing anything out (or replaces its own older version), else only
   * when it was asked for more than the least recently used entries it would push out, weighed by
   * the disk reads each saves (frequency.ts).
   */
  admits(key: string, size: number, freq: (key: string) => number): boolean {
    if (size > this.maxObject) return false;
    const need = size + ENTRY_OVERHEAD;
    let room = this.#lru.maxSize - this.#lru.calculatedSize;
    if (room >= need || this.#lru.has(key)) return true;
    const gain = freq(key) * (size + REQUEST_COST_BYTES);
    let loss = 0;
    for (const victim of this.#lru.rvalues()) {
      if (!victim) continue;
      loss += freq(victim.meta.key) * (victim.body.length + REQUEST_COST_BYTES);
      if (loss * ADMISSION_MARGIN >= gain) return false;
      room += victim.body.length + ENTRY_OVERHEAD;
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
    return this.#lru.calculatedSize - ENTRY_OVERHEAD * this.#lru.size;
  }

  get count(): number {
    return this.#lru.size;
  }
}
