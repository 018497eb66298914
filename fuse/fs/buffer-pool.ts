// Part buffers used again instead of allocated anew.
//
// Every Buffer that V8 sees allocated counts towards its external-memory limit, and crossing that
// limit starts a full mark-compact of the heap. Allocating each 16 MiB part fresh (and before
// that, assembling it from 1 MiB pieces and concatenating them) made a 1 GB upload run about 75
// full collections, a third of the mount's busy time on its main thread. A buffer that has come
// back from an upload is the right size for the next part, so the pool hands it out again and a
// steady upload allocates nothing.
//
// The pool lives inside the memory budget: a buffer keeps its reservation while it waits in the
// pool, so the budget still bounds every byte the mount holds. When someone needs budget that
// idle buffers hold, the budget asks the pool to drop them (MemoryBudget.setReclaimer); an
// idle-time timer drops them too, so a quiet mount gives its memory back.
//
// Buffers start on a page boundary where they can (aligned-buffer.ts), so that the local copy of a
// sent part can be written to disk with direct I/O.

import { alignedBuffer } from './aligned-buffer.ts';
import type { MemoryBudget } from './memory-budget.ts';

/**
 * How long an idle buffer is kept. Long enough to carry buffers from one file's last parts to the
 * next file's first ones in `cp -r` (tens of milliseconds apart), short enough that a mount that
 * has finished writing soon holds no more than readahead needs.
 */
export const IDLE_MS = 5000;

/**
 * The buffer size for `bytes` that vary from one use to the next (a file's last part, whole small
 * files): powers of two from 1 MiB, so that a buffer fits the next uses and is taken again.
 */
export function sizeClass(bytes: number): number {
  return Math.max(2 ** 20, 2 ** Math.ceil(Math.log2(Math.max(1, bytes))));
}

export class BufferPool {
  readonly budget: MemoryBudget;
  private readonly idleMs: number;
  /** Idle buffers by size; each still holds its reservation in the budget. */
  private readonly idle = new Map<number, Buffer[]>();
  private timer: NodeJS.Timeout | undefined;

  constructor(budget: MemoryBudget, idleMs = IDLE_MS) {
    this.budget = budget;
    this.idleMs = idleMs;
    budget.setReclaimer((bytes) => this.drop(bytes));
  }

  /** Bytes held by idle buffers. */
  get idleBytes(): number {
    let n = 0;
    for (const [size, list] of this.idle) n += size * list.length;
    return n;
  }

  /**
   * A buffer of exactly `size` bytes (contents undefined) with its memory reserved, waiting up to
   * `waitMs` for room; undefined when none came in time.
   */
  async take(size: number, waitMs = Number.POSITIVE_INFINITY): Promise<Buffer | undefined> {
    return this.reuse(size) ?? ((await this.budget.acquire(size, waitMs)) ? alignedBuffer(size) : undefined);
  }

  /** As take(), but only if room is there now, below `ceiling` bytes of the budget in use. */
  tryTake(size: number, ceiling?: number): Buffer | undefined {
    return this.reuse(size) ?? (this.budget.tryAcquire(size, ceiling) ? alignedBuffer(size) : undefined);
  }

  /**
   * Takes back a buffer from take() once nothing reads it any more (its upload has settled). Its
   * reservation stays with it until it is used again or dropped, unless someone is waiting for
   * memory: then the reservation goes to them at once.
   */
  give(buf: Buffer): void {
    if (this.budget.contended) {
      this.budget.release(buf.length);
      return;
    }
    const list = this.idle.get(buf.length);
    if (list) list.push(buf);
    else this.idle.set(buf.length, [buf]);
    this.timer?.refresh();
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.budget.release(this.drop(Number.POSITIVE_INFINITY));
    }, this.idleMs).unref();
  }

  private reuse(size: number): Buffer | undefined {
    return this.idle.get(size)?.pop();
  }

  /** Forgets idle buffers until at least `bytes` are freed; returns how many were. */
  private drop(bytes: number): number {
    let freed = 0;
    for (const [size, list] of this.idle) {
      while (list.length > 0 && freed < bytes) {
        list.pop();
        freed += this.budget.clamp(size);
      }
      if (list.length === 0) this.idle.delete(size);
      if (freed >= bytes) break;
    }
    return freed;
  }
}
