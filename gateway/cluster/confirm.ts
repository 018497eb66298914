// The primary's side of an invalidation: a write on one worker is answered only once every other
// worker that serves has dropped the key. The primary relays the invalidation to every worker,
// counts the confirmations of those past start-up (one still starting hears it before it serves:
// node queues the message until it listens), and then confirms to the writer.
//
// A serving worker that does not confirm within INVALIDATE_CONFIRM_MS is stuck: it is killed and
// replaced, as a supervisor does with a kid that stopped answering, and the write is first
// recorded on disk (cache/write-marks.ts), because the stuck worker may have stored the replaced
// version and its replacement's index scan would take it back. A worker that dies before it
// confirmed gets the same record.

import { INVALIDATE_CONFIRM_MS } from './messages.ts';

export interface ConfirmLinks {
  /** Workers past start-up: they must confirm. */
  serving(): Iterable<number>;
  /** Every worker, starting ones included: they are all told. */
  all(): Iterable<number>;
  relay(worker: number, seq: number, keys: readonly string[]): void;
  confirm(worker: number, id: number): void;
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
  readonly waiting: Set<number>;
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
    const waiting = new Set([...this.#links.serving()].filter((w) => w !== from));
    const p: Pending = { from, id, keys, at: Date.now(), waiting };
    this.#pending.set(seq, p);
    for (const w of this.#links.all()) if (w !== from) this.#links.relay(w, seq, keys);
    if (waiting.size === 0) return this.#finish(seq, p);
    p.timer = setTimeout(() => {
      const stuck = [...p.waiting];
      void this.#mark(p).then(() => {
        for (const w of stuck) if (p.waiting.has(w)) this.#links.kill(w, keys);
      });
    }, INVALIDATE_CONFIRM_MS);
    p.timer.unref();
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
