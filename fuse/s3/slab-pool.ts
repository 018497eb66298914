// The memory the pieces of readahead GETs are copied into (see ObjectClient.getPieces and
// releasePiece), used again once the reader has let every piece of it go.
//
// Why: each GET's bytes were copied into new memory, and V8 answers every few tens of MB of new
// Buffer memory with a full mark-compact whether or not the old memory is still in use: reading
// 1 GB through the mount ran 38 of them and spent as much CPU collecting as on everything else.
// Slabs given back are cut up again, so a steady read allocates almost nothing.
//
// A slab is cut into pieces for one GET at a time, in order. It is sealed when that GET needs a new
// one or ends, and goes back to the free list once it is sealed and every piece cut from it has
// been given back. Pieces that are never given back (a file closed or a reader that seeks while
// readahead is ahead of it) are simply collected with their slab: the pool keeps no hold on a slab
// that is out.

/** 1 MiB: big enough that a 1 GB read takes a thousand slabs, small enough to waste little. */
export const SLAB_SIZE = 2 ** 20;
/** Free slabs kept for the next GETs; more would only raise the idle mount's footprint. */
const MAX_FREE = 16;
/**
 * Smaller slabs, for GETs (or the ends of GETs) of less than a slab, come in powers of two from
 * this size, so that one freed is the right size for the next such GET: a read outside readahead
 * (at most 128 KiB) took fresh memory per GET before, a hundred readers' worth of garbage at once.
 * A GET's last slab then holds at most twice the bytes it carries.
 */
const MIN_CLASS = 16 * 1024;

/** The size of the slab taken for `size` bytes: SLAB_SIZE, or a smaller power of two. */
function classOf(size: number): number {
  return size >= SLAB_SIZE ? SLAB_SIZE : Math.max(MIN_CLASS, 2 ** Math.ceil(Math.log2(size)));
}

interface SlabState {
  readonly slab: Buffer;
  /** Pieces cut from it and not given back yet. */
  out: number;
  sealed: boolean;
  /** Back on the free list (or left to the collector): never freed twice. */
  freed: boolean;
}

export class SlabPool {
  /** Free slabs by size, and their bytes in all (at most MAX_FREE slabs' worth). */
  private readonly free = new Map<number, Buffer[]>();
  private freeBytes = 0;
  /**
   * Each piece cut and not given back yet, with its slab. Keyed by the piece, not its memory, so
   * a piece given back twice, or late from a slab's earlier use, cannot free the slab's new
   * pieces. Weak: a slab whose pieces are dropped instead of given back must stay collectable.
   */
  private readonly out = new WeakMap<Buffer, SlabState>();

  /** A cutter for one GET's body: `cut(view)` returns the view's bytes in memory of the pool. */
  cutter(): { cut(view: Buffer, left: number): Buffer; done(): void } {
    let current: SlabState | undefined;
    let used = 0;
    const seal = () => {
      if (!current) return;
      current.sealed = true;
      this.maybeFree(current);
      current = undefined;
    };
    return {
      /** `left`: bytes still to come in this GET, this view's included (Infinity when unknown). */
      cut: (view, left) => {
        if (!current || used + view.length > current.slab.length) {
          seal();
          current = this.take(Math.min(Math.max(SLAB_SIZE, view.length), left));
          used = 0;
        }
        view.copy(current.slab, used);
        const piece = current.slab.subarray(used, used + view.length);
        used += view.length;
        current.out++;
        this.out.set(piece, current);
        return piece;
      },
      done: seal,
    };
  }

  /** Takes back a piece `cut` returned; anything else, or a piece given back already, is ignored. */
  release(piece: Buffer): void {
    const state = this.out.get(piece);
    if (!state) return;
    this.out.delete(piece);
    state.out--;
    this.maybeFree(state);
  }

  /** Slabs on the free list, for tests. */
  get freeCount(): number {
    let n = 0;
    for (const list of this.free.values()) n += list.length;
    return n;
  }

  private take(size: number): SlabState {
    const cls = classOf(size);
    const slab = this.free.get(cls)?.pop();
    if (slab) this.freeBytes -= slab.length;
    // allocUnsafeSlow: memory of its own, never a slice of Node's shared 8 KiB pool.
    return { slab: slab ?? Buffer.allocUnsafeSlow(cls), out: 0, sealed: false, freed: false };
  }

  private maybeFree(state: SlabState): void {
    if (!state.sealed || state.out > 0 || state.freed) return;
    state.freed = true;
    const size = state.slab.length;
    if (this.freeBytes + size > MAX_FREE * SLAB_SIZE) return;
    this.freeBytes += size;
    const list = this.free.get(size);
    if (list) list.push(state.slab);
    else this.free.set(size, [state.slab]);
  }
}
