// The simulator's event queue: a binary min-heap on time, ties broken by insertion order so a
// run is deterministic. The loop jumps from one event (or control-loop interval) to the next;
// nothing advances in fixed small steps, so a quiet hour costs one pop, not 3,600 ticks.

export interface Timed {
  readonly at: number;
}

export class EventHeap<T extends Timed> {
  private readonly items: { ev: T; seq: number }[] = [];
  private seq = 0;

  get size(): number {
    return this.items.length;
  }

  push(ev: T): void {
    const a = this.items;
    a.push({ ev, seq: this.seq++ });
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(i, p)) break;
      [a[i], a[p]] = [a[p]!, a[i]!];
      i = p;
    }
  }

  /** Time of the earliest event; Infinity when empty. */
  peekAt(): number {
    return this.items[0]?.ev.at ?? Infinity;
  }

  pop(): T | undefined {
    const a = this.items;
    if (a.length === 0) return undefined;
    const top = a[0]!.ev;
    const last = a.pop()!;
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.less(l, m)) m = l;
        if (r < a.length && this.less(r, m)) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m]!, a[i]!];
        i = m;
      }
    }
    return top;
  }

  private less(i: number, j: number): boolean {
    const x = this.items[i]!;
    const y = this.items[j]!;
    return x.ev.at < y.ev.at || (x.ev.at === y.ev.at && x.seq < y.seq);
  }
}

/** The seeded generator the simulator draws from: the same seed gives the same run, on any machine. */
export { seeded } from '../../lib/seeded.ts';
