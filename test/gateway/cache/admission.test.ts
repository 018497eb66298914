// The memory tier's admission: request counts that age, and newcomers that must be asked for more
// often than what they would push out.

import { describe, expect, it } from 'vitest';
import type { EntryMeta } from '../../../gateway/cache/entry.ts';
import { Frequency } from '../../../gateway/cache/frequency.ts';
import { MemoryStore } from '../../../gateway/cache/memory-store.ts';

const KiB = 1024;
const MiB = 1024 * KiB;

function entry(key: string, size: number): { meta: EntryMeta; body: Buffer } {
  const meta: EntryMeta = { key, url: key, status: 200, headers: {}, requestTime: 0, responseTime: 0, size };
  return { meta, body: Buffer.alloc(size) };
}

describe('request counts', () => {
  it('counts requests per key and halves every count once the window is full', () => {
    const f = new Frequency(() => 10);
    for (let i = 0; i < 6; i++) f.touch('a');
    for (let i = 0; i < 3; i++) f.touch('b');
    expect(f.of('a')).toBe(6);
    expect(f.of('b')).toBe(3);
    f.touch('c');
    // The tenth request halves: a 6 → 3, b 3 → 1, c 1 → forgotten.
    expect(f.of('a')).toBe(3);
    expect(f.of('b')).toBe(1);
    expect(f.of('c')).toBe(0);
    expect(f.size).toBe(2);
  });

  it('holds at most a window of keys between two halvings', () => {
    const f = new Frequency(() => 100);
    for (let i = 0; i < 10_000; i++) f.touch(`k${i}`);
    expect(f.size).toBeLessThanOrEqual(100);
  });

  it('counts a key nobody asked for in two windows as never asked for, however hot it was', () => {
    const f = new Frequency(() => 100);
    for (let i = 0; i < 5000; i++) f.touch('yesterday');
    for (let i = 0; i < 50; i++) f.touch('today');
    expect(f.of('yesterday')).toBeGreaterThan(f.of('today'));
    for (let i = 0; i < 150; i++) f.touch('today');
    expect(f.of('yesterday')).toBe(0);
    expect(f.of('today')).toBeGreaterThan(0);
  });
});

describe('memory admission', () => {
  it('admits anything that fits without pushing an entry out, and a new version of a held key', () => {
    const m = new MemoryStore(4 * MiB, 4 * MiB);
    const never = () => 0;
    expect(m.admits('a', MiB, never)).toBe(true);
    m.set(entry('a', 3 * MiB));
    expect(m.admits('a', 3 * MiB, never)).toBe(true);
    expect(m.admits('b', 2 * MiB, never)).toBe(false);
    expect(m.admits('big', 5 * MiB, never)).toBe(false);
  });

  it('lets a frequently asked object push out rarely asked ones, and not the other way round', () => {
    const m = new MemoryStore(4 * MiB, 4 * MiB);
    m.set(entry('cold1', MiB));
    m.set(entry('cold2', MiB));
    m.set(entry('hot1', MiB));
    m.set(entry('hot2', MiB - 8 * KiB));
    const counts: Record<string, number> = { cold1: 1, cold2: 1, hot1: 20, hot2: 20, newHot: 10, newCold: 1 };
    const freq = (k: string) => counts[k] ?? 0;
    // newHot needs the two least recently used entries gone; together they were asked for twice.
    expect(m.admits('newHot', 2 * MiB - 8 * KiB, freq)).toBe(true);
    // Asked for as often as what it would replace: no swap (no churn among equals).
    expect(m.admits('newCold', MiB - 8 * KiB, freq)).toBe(false);
    // Pushing out hot entries takes more than being asked for half as often.
    counts.cold1 = 20;
    counts.cold2 = 20;
    expect(m.admits('newHot', 2 * MiB - 8 * KiB, freq)).toBe(false);
  });
});
