// Buffers for copying cached bodies from files to sockets. Two things keep a gateway with many
// readers small: slice sizes that adapt to each reader (a slow one holds one small slice, a fast
// one gets big slices and few syscalls), and reuse: a slice goes back to a shared pool once the
// socket has handed it to the kernel, instead of becoming garbage that the process holds (and
// the allocator keeps) until the next collection. Pure apart from the pool's own state.

/**
 * Slices adapt between these sizes: a slice the socket took at once doubles the next one, a slice
 * it had to queue halves it. 16 KiB is Node's own socket high-water mark; 1 MiB reads already cost
 * less than the copy into the socket, so larger ones gain nothing.
 */
export const MIN_SLICE = 16 * 1024;
export const MAX_SLICE = 1024 * 1024;
/** Idle slices kept for reuse, across all readers; beyond this they are left to the collector. */
const POOL_BYTES = 32 * 1024 * 1024;

/** The next slice size for one reader. */
export class Slicer {
  size = MIN_SLICE * 4;

  /** Records whether the socket took the last slice at once; returns that. */
  wrote(ok: boolean): boolean {
    this.size = ok ? Math.min(MAX_SLICE, this.size * 2) : Math.max(MIN_SLICE, this.size / 2);
    return ok;
  }
}

/** Free slices by size (always a power of two between MIN_SLICE and MAX_SLICE). */
const free = new Map<number, Buffer[]>();
let pooled = 0;

function sizeClass(n: number): number {
  let c = MIN_SLICE;
  while (c < n) c *= 2;
  return c;
}

/** A buffer of at least `n` bytes (n ≤ MAX_SLICE); give it back with `release` once written. */
export function takeSlice(n: number): Buffer {
  const c = sizeClass(n);
  const list = free.get(c);
  const b = list?.pop();
  if (b) {
    pooled -= c;
    return b;
  }
  return Buffer.allocUnsafeSlow(c);
}

export function releaseSlice(b: Buffer): void {
  if (pooled + b.length > POOL_BYTES) return;
  let list = free.get(b.length);
  if (!list) {
    list = [];
    free.set(b.length, list);
  }
  list.push(b);
  pooled += b.length;
}
