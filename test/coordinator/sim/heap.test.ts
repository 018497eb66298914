import { describe, expect, it } from 'vitest';
import { EventHeap, seeded } from '../../../coordinator/sim/heap.ts';

describe('EventHeap', () => {
  it('pops in time order, ties in insertion order', () => {
    const h = new EventHeap<{ at: number; n: number }>();
    const r = seeded(9);
    const evs = Array.from({ length: 500 }, (_, n) => ({ at: Math.floor(r() * 50), n }));
    for (const e of evs) h.push(e);
    const out: { at: number; n: number }[] = [];
    while (h.size) out.push(h.pop()!);
    expect(out).toEqual([...evs].sort((a, b) => a.at - b.at || a.n - b.n));
    expect(h.peekAt()).toBe(Infinity);
  });

  it('gives the same numbers for the same seed', () => {
    const a = seeded(42);
    const b = seeded(42);
    const xs = Array.from({ length: 5 }, () => a());
    expect(xs).toEqual(Array.from({ length: 5 }, () => b()));
    expect(new Set(xs).size).toBe(5);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
  });
});
