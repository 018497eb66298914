// The slabs readahead pieces are copied into: used again only once every piece of them is back.

import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { SLAB_SIZE, SlabPool } from '../../../fuse/s3/slab-pool.ts';

const view = (n: number, fill: number) => Buffer.alloc(n, fill);

describe('SlabPool', () => {
  it('copies each view into a slab and reuses a slab only once every piece of it was given back', () => {
    const pool = new SlabPool();
    const get = pool.cutter();
    const pieces = Array.from({ length: 20 }, (_, i) => get.cut(view(64 * 1024, i), 4 * SLAB_SIZE));
    get.done();
    // 16 views fill the first slab; the next four went to a second one.
    expect(pieces.every((p, i) => p.every((b) => b === i))).toBe(true);
    expect(pieces[15]!.buffer).toBe(pieces[0]!.buffer);
    expect(pieces[16]!.buffer).not.toBe(pieces[0]!.buffer);
    for (const p of pieces.slice(0, 15)) pool.release(p);
    expect(pool.freeCount).toBe(0);
    pool.release(pieces[15]!);
    expect(pool.freeCount).toBe(1);
    // Given back twice, or never cut here: ignored.
    pool.release(pieces[15]!);
    pool.release(Buffer.alloc(10));
    expect(pool.freeCount).toBe(1);
    const next = pool.cutter();
    const again = next.cut(view(10, 0xee), SLAB_SIZE);
    expect(again.buffer).toBe(pieces[0]!.buffer);
    // The first GET's second slab goes back with its last four pieces.
    for (const p of pieces.slice(16)) pool.release(p);
    expect(pool.freeCount).toBe(1);
    // A slab still being cut stays out, even with every piece of it given back.
    pool.release(again);
    expect(pool.freeCount).toBe(1);
    next.done();
    expect(pool.freeCount).toBe(2);
  });

  it('a piece given back late, after its slab went to another GET, does not free the new pieces', () => {
    const pool = new SlabPool();
    const first = pool.cutter();
    const old = first.cut(view(1000, 1), 4 * SLAB_SIZE);
    first.done();
    pool.release(old);
    expect(pool.freeCount).toBe(1);
    const second = pool.cutter();
    const now = second.cut(view(1000, 2), 4 * SLAB_SIZE);
    expect(now.buffer).toBe(old.buffer);
    second.done();
    // A stale or second release of the slab's earlier piece: the new piece is still out.
    pool.release(old);
    pool.release(old.subarray(0, 10));
    expect(pool.freeCount).toBe(0);
    pool.release(now);
    expect(pool.freeCount).toBe(1);
  });

  it('sizes the slab of a short GET to a power of two of what is left, and uses it for the next one', () => {
    const pool = new SlabPool();
    const get = pool.cutter();
    const p = get.cut(view(100 * 1024, 1), 100 * 1024);
    get.done();
    expect(p.buffer.byteLength).toBe(128 * 1024);
    pool.release(p);
    expect(pool.freeCount).toBe(1);
    // A read of 128 KiB outside readahead takes it again instead of new memory; a 1 MiB GET does not.
    const next = pool.cutter();
    expect(next.cut(view(1000, 2), 128 * 1024).buffer).toBe(p.buffer);
    expect(pool.cutter().cut(view(1000, 3), SLAB_SIZE).buffer.byteLength).toBe(SLAB_SIZE);
  });

  it('keeps no hold on a slab whose pieces were dropped instead of given back', () => {
    // In a process of its own: the test runner's keeps its own references to what tests allocate.
    const script = `
      import { SlabPool, SLAB_SIZE } from ${JSON.stringify(new URL('../../../fuse/s3/slab-pool.ts', import.meta.url).href)};
      const pool = new SlabPool();
      const ref = (() => {
        const get = pool.cutter();
        const piece = get.cut(Buffer.alloc(1000, 1), 4 * SLAB_SIZE);
        get.done();
        return new WeakRef(piece.buffer);
      })();
      // No deref() before the end: it would keep the buffer alive for the rest of the module's job.
      for (let i = 0; i < 5; i++) {
        globalThis.gc();
        await new Promise((r) => setTimeout(r, 10));
      }
      console.log(ref.deref() === undefined ? 'collected' : 'held');`;
    const out = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    expect(out.trim()).toBe('collected');
  });
});
