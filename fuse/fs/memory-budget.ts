// The hard memory budget shared by readahead and write buffers. Writers wait for room (so a fast
// `cp` slows to the speed of the link instead of growing the heap); readahead only takes what is
// free right now and otherwise reads just what was asked. Waiters are served in order, so a big
// request cannot starve behind a stream of small ones. Memory parked for reuse (buffer-pool.ts)
// stays counted here, and is given up through the reclaimer as soon as anyone is short of room.

interface Waiter {
  readonly bytes: number;
  readonly resolve: (ok: boolean) => void;
  timer?: NodeJS.Timeout;
}

export class MemoryBudget {
  readonly limit: number;
  private usedBytes = 0;
  private readonly waiters: Waiter[] = [];
  private reclaimer: ((bytes: number) => number) | undefined;

  constructor(limit: number) {
    this.limit = limit;
  }

  get used(): number {
    return this.usedBytes;
  }

  /** True while someone waits for room: memory coming free should go to them, not be parked. */
  get contended(): boolean {
    return this.waiters.length > 0;
  }

  /**
   * `reclaim(bytes)` frees at least `bytes` of reserved but idle memory if it can, and returns how
   * much it freed (without calling release()).
   */
  setReclaimer(reclaim: (bytes: number) => number): void {
    this.reclaimer = reclaim;
  }

  /** Gives idle memory back until `bytes` more fit under `ceiling`, as far as there is any. */
  private makeRoom(bytes: number, ceiling: number): void {
    const short = this.usedBytes + bytes - ceiling;
    if (short > 0 && this.reclaimer) this.usedBytes = Math.max(0, this.usedBytes - this.reclaimer(short));
  }

  /** A request bigger than the whole budget is served as the whole budget, alone. */
  clamp(bytes: number): number {
    return Math.min(bytes, this.limit);
  }

  /** Takes `bytes` if they fit under `ceiling` (the whole budget unless given) right now. */
  tryAcquire(bytes: number, ceiling = this.limit): boolean {
    const n = this.clamp(bytes);
    if (this.waiters.length > 0) return false;
    const cap = Math.min(ceiling, this.limit);
    this.makeRoom(n, cap);
    if (this.usedBytes + n > cap) return false;
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
    if (this.waiters.length > 0) this.makeRoom(this.waiters[0]!.bytes, this.limit);
    while (this.waiters.length > 0 && this.usedBytes + this.waiters[0]!.bytes <= this.limit) {
      const w = this.waiters.shift()!;
      if (w.timer) clearTimeout(w.timer);
      this.usedBytes += w.bytes;
      w.resolve(true);
    }
  }
}
