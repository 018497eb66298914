// Memories keyed by what clients ask for, under long request targets (a request line may be
// 16 KiB): the marks of keys written through the gateway (Cache.invalidate, one per successful
// unsafe request), the request counts for admission (Frequency) and the memory tier must stay
// bounded in bytes, not only in entries. 10,000 marks of 15 KB keys were 144 MiB under the
// 100,000-entry cap; a frequency window of 2,000 such keys kept 29 MiB on a quiet gateway until
// the next window; a 16 MiB memory tier of 10-byte objects under such URLs held 146 MiB.

import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { Cache } from '../../../gateway/cache/cache.ts';
import type { DiskStore } from '../../../gateway/cache/disk-store.ts';
import { Frequency, MIN_FREQUENCY_WINDOW } from '../../../gateway/cache/frequency.ts';
import type { EntryMeta } from '../../../gateway/cache/entry.ts';
import { MemoryStore } from '../../../gateway/cache/memory-store.ts';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const MiB = 2 ** 20;

function liveHeap(): number {
  gc();
  gc();
  return v8.getHeapStatistics().used_heap_size;
}

/** The i-th of many distinct 15 KB keys, flat as the HTTP parser hands them over. */
const PAD = 'a'.repeat(15_000);
function longKey(i: number): string {
  const k = `http://o.example/${i}/${PAD}`;
  // A map lookup flattens a concatenation; do it here so every key costs its bytes up front.
  return Buffer.from(k, 'latin1').toString('latin1');
}

describe('memories keyed by long request targets', () => {
  it('keeps write marks within a byte budget, and the latest ones', () => {
    const stores = { delete: () => false };
    const cache = new Cache(stores as unknown as MemoryStore, stores as unknown as DiskStore);
    const before = liveHeap();
    const t0 = Date.now();
    for (let i = 0; i < 10_000; i++) cache.invalidateHere(longKey(i));
    const grown = (liveHeap() - before) / MiB;
    expect(grown).toBeLessThan(40);
    // The newest mark is there: a fill started before the write is still not stored.
    expect(cache.writtenSince(longKey(9_999), t0)).toBe(true);
  });

  it('counts requests for long keys without keeping the keys', () => {
    const f = new Frequency();
    const before = liveHeap();
    // With the touch below, just short of a window: nothing is halved away.
    for (let i = 0; i < MIN_FREQUENCY_WINDOW - 2; i++) f.touch(longKey(i));
    const grown = (liveHeap() - before) / MiB;
    expect(grown).toBeLessThan(4);
    f.touch(longKey(7));
    expect(f.of(longKey(7))).toBe(2);
    expect(f.of(longKey(8))).toBe(1);
    expect(f.of(longKey(MIN_FREQUENCY_WINDOW + 5))).toBe(0);
  });
});

describe('the memory tier under long URLs', () => {
  it('counts the key and URL of each entry against --mem-cache', () => {
    const max = 16 * MiB;
    const store = new MemoryStore(max, MiB);
    const before = liveHeap();
    for (let i = 0; i < 5_000; i++) {
      const key = longKey(i);
      const meta: EntryMeta = { key, url: longKey(i), status: 200, headers: {}, requestTime: 0, responseTime: 0, size: 10 };
      store.set({ meta, body: Buffer.alloc(10) });
    }
    const grown = (liveHeap() - before) / MiB;
    expect(grown).toBeLessThan(max / MiB + 4);
    // `bytes` is still the bodies held.
    expect(store.bytes).toBe(store.count * 10);
    expect(store.count).toBeGreaterThan(100);
  });

  it('counts bodies alone in `bytes`, however entries come and go', () => {
    const store = new MemoryStore(MiB, MiB);
    const meta = (key: string, size: number): EntryMeta => ({ key, url: key, status: 200, headers: {}, requestTime: 0, responseTime: 0, size });
    const a = { meta: meta(longKey(1), 100), body: Buffer.alloc(100) };
    store.set(a);
    store.set(a);
    store.set({ meta: meta(longKey(1), 50), body: Buffer.alloc(50) });
    store.set({ meta: meta('http://o/short', 7), body: Buffer.alloc(7) });
    expect(store.bytes).toBe(57);
    store.delete(longKey(1));
    expect(store.bytes).toBe(7);
  });
});
