// The cores of one pool as the policy plans them: for each drone, when each of its cores is next
// free (milliseconds from now). The policy asks for the drone where a job of k cores can start
// soonest, thousands of times per interval, so each k has a heap of drones keyed by the time their
// k-th core is free; an assignment pushes the drone anew and stale entries are skipped (each
// drone carries a version). Pure data structure, no I/O.

interface Entry {
  readonly key: number;
  readonly idx: number;
  readonly ver: number;
}

class Heap {
  private readonly a: Entry[] = [];
  get size(): number {
    return this.a.length;
  }
  peek(): Entry | undefined {
    return this.a[0];
  }
  push(e: Entry): void {
    const a = this.a;
    a.push(e);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p]!.key <= a[i]!.key) break;
      [a[p], a[i]] = [a[i]!, a[p]!];
      i = p;
    }
  }
  pop(): void {
    const a = this.a;
    const last = a.pop()!;
    if (a.length === 0) return;
    a[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < a.length && a[l]!.key < a[m]!.key) m = l;
      if (r < a.length && a[r]!.key < a[m]!.key) m = r;
      if (m === i) return;
      [a[m], a[i]] = [a[i]!, a[m]!];
      i = m;
    }
  }
}

export class PoolSlots {
  /** Per drone, its cores' next-free times, ascending. */
  private readonly free: number[][] = [];
  private readonly ver: number[] = [];
  private readonly heaps = new Map<number, Heap>();

  /** Adds a drone whose cores are free at the given times; returns its index. */
  add(coresFreeAt: readonly number[]): number {
    const idx = this.free.length;
    this.free.push([...coresFreeAt].sort((a, b) => a - b));
    this.ver.push(0);
    for (const [k, heap] of this.heaps) this.index(heap, k, idx);
    return idx;
  }

  get drones(): number {
    return this.free.length;
  }

  /** The drone where k cores are free soonest, and when; undefined when no drone has k cores. */
  best(k: number): { idx: number; at: number } | undefined {
    let heap = this.heaps.get(k);
    if (!heap) {
      heap = new Heap();
      this.heaps.set(k, heap);
      for (let i = 0; i < this.free.length; i++) this.index(heap, k, i);
    }
    for (let top = heap.peek(); top; top = heap.peek()) {
      if (top.ver === this.ver[top.idx]) return { idx: top.idx, at: top.key };
      heap.pop();
    }
    return undefined;
  }

  /** Runs a job of k cores on drone idx from its k-th free core until `until`. */
  assign(idx: number, k: number, until: number): void {
    const f = this.free[idx]!;
    for (let i = 0; i < k; i++) f[i] = until;
    f.sort((a, b) => a - b);
    this.ver[idx]!++;
    for (const [kk, heap] of this.heaps) this.index(heap, kk, idx);
  }

  private index(heap: Heap, k: number, idx: number): void {
    const f = this.free[idx]!;
    if (f.length >= k) heap.push({ key: f[k - 1]!, idx, ver: this.ver[idx]! });
  }
}
