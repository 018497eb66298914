import { describe, expect, it } from 'vitest';
import { PUT_BACK_NAME_GRACE_MS, PutBackNames } from '../../../fuse/fs/put-back-names.ts';

const H = '/d/.fuse_hidden0000000100000001';
const H2 = '/d/.fuse_hidden0000000200000002';

describe('the hidden names of put-back files', () => {
  it('stands for the file while open, and for the grace period after the last close only', () => {
    const n = new PutBackNames();
    n.set(H, '/d/t');
    expect(n.named(H, 0)).toBe('/d/t');
    expect(n.named('/d/other', 0)).toBe('/d/other');
    expect(n.lastClose(H, 10_000)).toBe(true);
    expect(n.named(H, 10_000 + PUT_BACK_NAME_GRACE_MS)).toBe('/d/t');
    expect(n.has(H, 10_000 + PUT_BACK_NAME_GRACE_MS + 1)).toBe(false);
    expect(n.named(H, 10_000 + PUT_BACK_NAME_GRACE_MS + 1)).toBe(H);
    expect(n.lastClose(H, 20_000)).toBe(false);
  });

  it('a second last close does not lengthen the grace period', () => {
    const n = new PutBackNames();
    n.set(H, '/d/t');
    n.lastClose(H, 0);
    n.lastClose(H, PUT_BACK_NAME_GRACE_MS - 1);
    expect(n.has(H, PUT_BACK_NAME_GRACE_MS + 1)).toBe(false);
  });

  it('follows the file through a rename, and through a rename of a directory above it', () => {
    const n = new PutBackNames();
    n.set(H, '/d/t');
    n.renamed('/d/t', '/d/u');
    expect(n.named(H, 0)).toBe('/d/u');
    n.movedTree('/d', '/e');
    expect(n.named('/e/.fuse_hidden0000000100000001', 0)).toBe('/e/u');
    expect(n.has(H, 0)).toBe(false);
    // A sibling whose name only starts like the directory's stays.
    n.set('/dd/.fuse_hidden0000000300000003', '/dd/x');
    n.movedTree('/d', '/f');
    expect(n.named('/dd/.fuse_hidden0000000300000003', 0)).toBe('/dd/x');
  });

  it('only open names are offered for a removal of the file, and a removal ends the others', () => {
    const n = new PutBackNames();
    n.set(H, '/d/t');
    n.set(H2, '/d/t');
    n.lastClose(H2, 0);
    expect(n.openFor('/d/t', 0)).toBe(H);
    n.lastClose(H, 0);
    expect(n.openFor('/d/t', 0)).toBeUndefined();
    n.removed('/d/t');
    expect(n.has(H, 0) || n.has(H2, 0)).toBe(false);
  });

  it('a hide of the file gives its open names the removed file, ends closed ones and the hidden name itself', () => {
    const n = new PutBackNames();
    n.set(H, '/d/t');
    n.set(H2, '/d/t');
    n.set('/d/.fuse_hidden0000000400000004', '/d/t');
    n.lastClose('/d/.fuse_hidden0000000400000004', 0);
    n.hidden('/d/t', H);
    expect(n.has(H, 0)).toBe(false);
    expect(n.named(H2, 0)).toBe(H);
    expect(n.has('/d/.fuse_hidden0000000400000004', 0)).toBe(false);
  });
});
