import { describe, expect, it } from 'vitest';
import { BufferPool, sizeClass } from '../../../fuse/fs/buffer-pool.ts';
import { MemoryBudget } from '../../../fuse/fs/memory-budget.ts';

const MiB = 2 ** 20;

describe('BufferPool', () => {
  it('hands a returned buffer out again instead of allocating, and keeps its reservation meanwhile', async () => {
    const budget = new MemoryBudget(64 * MiB);
    const pool = new BufferPool(budget);
    const a = (await pool.take(16 * MiB))!;
    expect(budget.used).toBe(16 * MiB);
    pool.give(a);
    expect(budget.used).toBe(16 * MiB);
    expect(pool.idleBytes).toBe(16 * MiB);
    expect(await pool.take(16 * MiB)).toBe(a);
    expect(pool.idleBytes).toBe(0);
    expect(budget.used).toBe(16 * MiB);
    // Another size is another buffer.
    const b = pool.tryTake(8 * MiB)!;
    expect(b).not.toBe(a);
    expect(b.length).toBe(8 * MiB);
    expect(budget.used).toBe(24 * MiB);
  });

  it('gives idle buffers up when anyone else needs the budget', async () => {
    const budget = new MemoryBudget(32 * MiB);
    const pool = new BufferPool(budget);
    pool.give((await pool.take(16 * MiB))!);
    pool.give((await pool.take(8 * MiB))!);
    expect(budget.used).toBe(24 * MiB);
    // Readahead's kind of request: only what is free now, below a ceiling.
    expect(budget.tryAcquire(20 * MiB)).toBe(true);
    expect(pool.idleBytes).toBeLessThanOrEqual(12 * MiB);
    expect(budget.used).toBe(20 * MiB + pool.idleBytes);
    expect(budget.used).toBeLessThanOrEqual(32 * MiB);
  });

  it('passes memory straight to a waiting writer instead of parking it', async () => {
    const budget = new MemoryBudget(32 * MiB);
    const pool = new BufferPool(budget);
    const a = (await pool.take(16 * MiB))!;
    const b = (await pool.take(16 * MiB))!;
    const waiting = pool.take(24 * MiB);
    pool.give(a);
    pool.give(b);
    const c = await waiting;
    expect(c?.length).toBe(24 * MiB);
    expect(pool.idleBytes).toBe(0);
    expect(budget.used).toBe(24 * MiB);
  });

  it('drops what stayed idle, so a quiet mount holds nothing', async () => {
    const budget = new MemoryBudget(64 * MiB);
    const pool = new BufferPool(budget, 20);
    const a = (await pool.take(16 * MiB))!;
    const b = (await pool.take(16 * MiB))!;
    pool.give(a);
    pool.give(b);
    expect(budget.used).toBe(32 * MiB);
    await new Promise((r) => setTimeout(r, 60));
    expect(pool.idleBytes).toBe(0);
    expect(budget.used).toBe(0);
  });

  it('says when no memory came in time', async () => {
    const budget = new MemoryBudget(16 * MiB);
    const pool = new BufferPool(budget);
    const a = (await pool.take(16 * MiB))!;
    expect(await pool.take(16 * MiB, 10)).toBeUndefined();
    expect(pool.tryTake(MiB)).toBeUndefined();
    pool.give(a);
    expect(pool.tryTake(16 * MiB)).toBe(a);
  });
});

describe('sizeClass', () => {
  it('rounds up to a power of two, from 1 MiB', () => {
    expect(sizeClass(0)).toBe(MiB);
    expect(sizeClass(1000)).toBe(MiB);
    expect(sizeClass(MiB)).toBe(MiB);
    expect(sizeClass(MiB + 1)).toBe(2 * MiB);
    expect(sizeClass(10_000_000)).toBe(16 * MiB);
    expect(sizeClass(16 * MiB)).toBe(16 * MiB);
  });
});
