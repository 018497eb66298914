// The hard memory budget shared by readahead and write buffers. Writers wait for room (so a fast
// `cp` slows to the speed of the link instead of growing the heap); readahead only takes what is
// free right now and otherwise reads just what was asked. Waiters are served in order, so a big
// request cannot starve behind a stream of small ones.

interface Waiter {
  readonly bytes: number;
  readonly resolve: (ok: boolean) => void;
  timer?: NodeJS.Timeout;
}

export class MemoryBudget {
  readonly limit: number;
  private usedBytes = 0;
  private readonly waiters: Waiter[] = [];

  constructor(limit: number) {
    this.limit = limit;
  }

  get used(): number {
    return this.usedBytes;
  }

  /** A request bigger than the whole budget is served as the whole budget, alone. */
  private clamp(bytes: number): number {
    return Math.min(bytes, this.limit);
  }

  /** Takes `bytes` if they fit under `ceiling` (the whole budget unless given) right now. */
  tryAcquire(bytes: number, ceiling = this.limit): boolean {
    const n = this.clamp(bytes);
    if (this.waiters.length > 0 || this.usedBytes + n > Math.min(ceiling, this.limit)) return false;
    this.usedBytes += n;
    return true;
  }

  /** Resolves true once `bytes` are reserved, or false after `timeoutMs` without room. */
  acquire(bytes: number, timeoutMs = Number.POSITIVE_INFINITY): Promise<boolean> {
    if (this.tryAcquire(bytes)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter: Waiter = { bytes: this.clamp(bytes), resolve };
      if (Number.isFinite(timeoutMs)) {
        waiter.timer = setTimeout(() => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          resolve(false);
          this.drain();
        }, timeoutMs);
      }
      this.waiters.push(waiter);
    });
  }

  release(bytes: number): void {
    this.usedBytes = Math.max(0, this.usedBytes - this.clamp(bytes));
    this.drain();
  }

  private drain(): void {
    while (this.waiters.length > 0 && this.usedBytes + this.waiters[0]!.bytes <= this.limit) {
      const w = this.waiters.shift()!;
      if (w.timer) clearTimeout(w.timer);
      this.usedBytes += w.bytes;
      w.resolve(true);
    }
  }
}
