// Buffers for copying cached bodies from files to sockets. Two things keep a gateway with many
// readers small: slice sizes that adapt to each reader's pace (a slow one holds one small slice,
// a fast one gets big slices and few reads), and reuse: a slice goes back to a shared pool once the
// socket has handed it to the kernel, instead of becoming garbage that the process holds (and
// the allocator keeps) until the next collection. Pure apart from the pool's own state.

/**
 * Slices adapt between these sizes: a slice the socket took at once doubles the next one; after a
 * slice the socket had to queue, the next one is what the reader took in QUEUE_MS at the pace it
 * drained that one. 16 KiB is Node's own socket high-water mark; 1 MiB reads already cost less
 * than the copy into the socket, so larger ones gain nothing.
 */
export const MIN_SLICE = 16 * 1024;
export const MAX_SLICE = 1024 * 1024;
/**
 * How much of a reader's time one slice may cover. Queueing alone says nothing about pace: on a
 * busy machine even a loopback reader leaves most slices queued for a moment, and halving on
 * every queued slice shrank them to 16 KiB, so an 8 MiB hit took 512 reads, each a round trip
 * through the thread pool (four times nginx's CPU per request). A reader draining 1 MiB within
 * 50 ms keeps 1 MiB slices; one at 1 MB/s holds about 50 KB.
 */
const QUEUE_MS = 50;
/** Idle slices kept for reuse, across all readers; beyond this they are left to the collector. */
const POOL_BYTES = 32 * 1024 * 1024;

/** The next slice size for one reader. */
export class Slicer {
  size = MIN_SLICE * 4;

  /** Records whether the socket took the last slice at once; returns that. */
  wrote(ok: boolean): boolean {
    if (ok) this.size = Math.min(MAX_SLICE, this.size * 2);
    return ok;
  }

  /** Records that a queued slice of `bytes` drained after `ms`: the next fits the reader's pace. */
  drained(bytes: number, ms: number): void {
    const fits = (bytes / Math.max(ms, 1)) * QUEUE_MS;
    let size = MIN_SLICE;
    while (size < MAX_SLICE && size * 2 <= fits) size *= 2;
    this.size = size;
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
