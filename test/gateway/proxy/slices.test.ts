// Slice sizes follow each reader's pace, not whether a single write had to queue.

import { describe, expect, it } from 'vitest';
import { MAX_SLICE, MIN_SLICE, Slicer } from '../../../gateway/proxy/slices.ts';

describe('slice sizes', () => {
  it('grows while the socket takes every slice at once', () => {
    const s = new Slicer();
    for (let i = 0; i < 10; i++) s.wrote(true);
    expect(s.size).toBe(MAX_SLICE);
  });

  it('keeps big slices for a fast reader whose slices queue for a moment', () => {
    const s = new Slicer();
    for (let i = 0; i < 10; i++) s.wrote(true);
    for (let i = 0; i < 20; i++) {
      s.wrote(false);
      s.drained(MAX_SLICE, 5);
    }
    expect(s.size).toBe(MAX_SLICE);
  });

  it('shrinks to what a slow reader takes in a short while, never below the minimum', () => {
    const s = new Slicer();
    for (let i = 0; i < 10; i++) s.wrote(true);
    s.wrote(false);
    // 1 MB/s: 1 MiB took a second to drain.
    s.drained(MAX_SLICE, 1000);
    expect(s.size).toBeLessThanOrEqual(64 * 1024);
    expect(s.size).toBeGreaterThanOrEqual(MIN_SLICE);
    s.wrote(false);
    s.drained(s.size, 60_000);
    expect(s.size).toBe(MIN_SLICE);
  });
});
