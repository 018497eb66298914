// libfuse's names for removed open files (fuse.c: `.fuse_hidden%08x%08x`, node then a count of
// such names since the mount started) are told apart from a user's rename to a name of that form.

import { describe, expect, it } from 'vitest';
import { HiddenNames } from '../../../fuse/fs/hidden-names.ts';

const name = (node: number, count: number) =>
  `.fuse_hidden${node.toString(16).padStart(8, '0')}${count.toString(16).padStart(8, '0')}`;

describe('HiddenNames', () => {
  it("takes libfuse's next counts, in or out of order, each once", () => {
    const h = new HiddenNames();
    expect(h.take(name(2, 1))).toBe(true);
    expect(h.take(name(7, 3))).toBe(true);
    // A hide on another FUSE thread that reached the mount later.
    expect(h.take(name(5, 2))).toBe(true);
    expect(h.take(name(5, 2))).toBe(false);
    // Counts libfuse skipped (a name it found taken) do not stop the next.
    expect(h.take(name(9, 12))).toBe(true);
  });

  it("leaves a user's names of that form alone", () => {
    const h = new HiddenNames();
    expect(h.take('.fuse_hidden0123456789abcdef')).toBe(false);
    expect(h.take('.fuse_hidden4567456789abcdef')).toBe(false);
    expect(h.take(name(2, 1000))).toBe(false);
    expect(h.take('.fuse_hidden0000000200000001x')).toBe(false);
    expect(h.take('fuse_hidden0000000200000001')).toBe(false);
    expect(h.take('.fuse_hidden0000000G00000001')).toBe(false);
    // The first hide of the mount is still libfuse's.
    expect(h.take(name(2, 1))).toBe(true);
  });

  it('follows the count a long-running mount reaches', () => {
    const h = new HiddenNames();
    for (let c = 1; c <= 5000; c++) expect(h.take(name(3, c))).toBe(true);
    expect(h.take(name(3, 1))).toBe(false);
    expect(h.take(name(3, 5001))).toBe(true);
  });
});
