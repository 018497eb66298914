// The primary's side of an invalidation: a write on one worker is answered only once every other
// worker that serves has dropped the key. The primary relays the invalidation to every worker,
// counts the confirmations of those past start-up (one still starting hears it before it serves:
// node queues the message until it listens), and then confirms to the writer.
//
// A serving worker that says nothing for INVALIDATE_CONFIRM_MS is stuck: it is killed and
// replaced, as a supervisor does with a kid that stopped answering, and the write is recorded on
// disk (cache/write-marks.ts), because the stuck worker may have stored the replaced version and
// its replacement's index scan would take it back. The kill does not wait for the record: a dead
// worker stores nothing more, its replacement scans only once every record begun is on disk
// (marksWritten), and the writer is confirmed only once both the worker is gone and the record is
// written. A worker that dies before it confirmed gets the same record.
//
// Silence, not the total time, is what makes a worker stuck: a purge of 100,000 keys takes a
// healthy worker seconds (every file is unlinked before it answers), and it reports each part of
// the invalidation as it finishes it. Those reports re-arm its 5 s and are passed on to the
// writer, whose own guard (7 s) is about the primary's silence too.

import { INVALIDATE_CONFIRM_MS } from './messages.ts';

export interface ConfirmLinks {
  /** Workers past start-up: they must confirm. */
  serving(): Iterable<number>;
  /** Every worker, starting ones included: they are all told. */
  all(): Iterable<number>;
  relay(worker: number, seq: number, keys: readonly string[]): void;
  confirm(worker: number, id: number): void;
  /** Tells the writer that its invalidation `id` is progressing (a worker finished a part). */
  progress(worker: number, id: number): void;
  /** Records the write on disk (write-marks.ts). */
  mark(keys: readonly string[], at: number): Promise<void>;
  /** Kills a worker that did not confirm in time; its exit comes back as `gone`. */
  kill(worker: number, keys: readonly string[]): void;
}

interface Pending {
  readonly from: number;
  readonly id: number;
  readonly keys: readonly string[];
  readonly at: number;
  /** Workers that must still confirm, with when each was last heard (Infinity: killed, awaiting its exit). */
  readonly waiting: Map<number, number>;
  timer?: NodeJS.Timeout;
  marked?: Promise<void>;
}

export class Confirmations {
  readonly #links: ConfirmLinks;
  readonly #pending = new Map<number, Pending>();
  readonly #marks = new Set<Promise<void>>();
  #seq = 1;

  constructor(links: ConfirmLinks) {
    this.#links = links;
  }

  /** Worker `from` invalidated `keys` (its message id `id`). */
  start(from: number, id: number, keys: readonly string[]): void {
    const seq = this.#seq++;
    const at = Date.now();
    const waiting = new Map([...this.#links.serving()].filter((w) => w !== from).map((w) => [w, at]));
    const p: Pending = { from, id, keys, at, waiting };
    this.#pending.set(seq, p);
    for (const w of this.#links.all()) if (w !== from) this.#links.relay(w, seq, keys);
    if (waiting.size === 0) return this.#finish(seq, p);
    this.#arm(p, INVALIDATE_CONFIRM_MS);
  }

  /** Worker `worker` finished a part of invalidation `seq`: it is alive, and the writer hears so. */
  progressed(worker: number, seq: number): void {
    const p = this.#pending.get(seq);
    const heard = p?.waiting.get(worker);
    if (!p || heard === undefined || heard === Infinity) return;
    p.waiting.set(worker, Date.now());
    this.#links.progress(p.from, p.id);
  }

  answered(worker: number, seq: number): void {
    const p = this.#pending.get(seq);
    if (!p?.waiting.delete(worker)) return;
    if (p.waiting.size === 0) this.#finish(seq, p);
  }

  /** A worker exited: what it had not confirmed is recorded on disk, then confirmed without it. */
  gone(worker: number): void {
    for (const [seq, p] of this.#pending) {
      if (!p.waiting.delete(worker)) continue;
      void this.#mark(p);
      if (p.waiting.size === 0) this.#finish(seq, p);
    }
  }

  /** Resolves once every record begun so far is on disk: a replacement worker scans after that. */
  async marksWritten(): Promise<void> {
    await Promise.all(this.#marks);
  }

  #arm(p: Pending, delay: number): void {
    p.timer = setTimeout(() => this.#expire(p), delay);
    p.timer.unref();
  }

  /** Kills the workers silent for INVALIDATE_CONFIRM_MS, and waits on for the others. */
  #expire(p: Pending): void {
    const now = Date.now();
    const stuck = [...p.waiting].filter(([, heard]) => now - heard >= INVALIDATE_CONFIRM_MS).map(([w]) => w);
    if (stuck.length > 0) {
      // Begun before the kill, so the replacement (which waits for marksWritten) scans after it.
      void this.#mark(p);
      for (const w of stuck) {
        p.waiting.set(w, Infinity);
        this.#links.kill(w, p.keys);
      }
    }
    const next = Math.min(...p.waiting.values());
    if (Number.isFinite(next)) this.#arm(p, next + INVALIDATE_CONFIRM_MS - now);
  }

  #mark(p: Pending): Promise<void> {
    if (!p.marked) {
      const m = this.#links.mark(p.keys, p.at).catch(() => undefined);
      this.#marks.add(m);
      void m.then(() => this.#marks.delete(m));
      p.marked = m;
    }
    return p.marked;
  }

  #finish(seq: number, p: Pending): void {
    clearTimeout(p.timer);
    this.#pending.delete(seq);
    void (p.marked ?? Promise.resolve()).then(() => this.#links.confirm(p.from, p.id));
  }
}
