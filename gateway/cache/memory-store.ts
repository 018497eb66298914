// The memory tier: small hot objects, bounded in bytes, least recently used out first.

import { LRUCache } from 'lru-cache';
import type { EntryMeta } from './entry.ts';

export interface MemoryEntry {
  readonly meta: EntryMeta;
  readonly body: Buffer;
}

/** Bookkeeping per entry besides the body (metadata, map slots), roughly. */
const ENTRY_OVERHEAD = 1024;

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
