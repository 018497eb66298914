// Giving memory back after a burst. A forward proxy asked for many distinct origins makes a lot
// of short-lived garbage per request (an undici pool and client per origin, its error, our
// answer); V8 grows the heap to hold it, and after the burst frees the objects but keeps the pages
// (measured: 20,000 refused origins, heap used back to 28 MiB of 240 MiB committed, RSS 317 MiB).
// Long request lines do the same with less: 10,000 refused 15 KB URLs grow the young generation to
// its 128 MiB ceiling and RSS by about 150 MiB, of which under 5 MiB is still live afterwards.
// Its memory reducer, which would give them back, waits for a low allocation rate, and it judges
// that rate from samples taken at collections — none happen in an idle process, so the burst's
// rate stands and the pages stay for good (still there after 90 s idle).
//
// So the gateway asks for the memory-reducing collection itself: once the process has answered no
// request and moved no body byte for IDLE_MS, and the heap holds much more than it uses. That
// collection (V8's "last resort": it compacts and returns pooled pages) pauses the process for
// some 0.2 s per 250 MiB, which only an idle gateway can afford; a busy one never runs it. It runs
// once per quiet spell: a heap that stays loose after it would not get tighter from a second one.

import v8 from 'node:v8';
import vm from 'node:vm';

/** An idle gateway is one that answered nothing and moved no body byte for this long. */
const IDLE_MS = 10_000;
/**
 * How often activity is sampled. The quiet spell is timed from the sample that first saw it, so
 * the collection comes IDLE_MS to IDLE_MS + CHECK_MS after the last request. (Checking only every
 * IDLE_MS, and asking for one whole interval without activity, put it 10 to 20 s after, by the
 * phase of the timer.) A sample reads three counters; the heap figures only once the spell is long
 * enough.
 */
const CHECK_MS = 500;
/** Committed heap beyond what is used that is worth a collection: below it the pause buys little. */
const SLACK_BYTES = 32 * 2 ** 20;

type Collect = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

let collect: Collect | undefined;
/**
 * V8's collection function, without starting Node with --expose-gc: the flag makes V8 install
 * `gc` in contexts created after it is set, and only in those, so the main context is unchanged.
 */
function collector(): Collect {
  if (!collect) {
    v8.setFlagsFromString('--expose-gc');
    collect = vm.runInNewContext('gc') as Collect;
  }
  return collect;
}

/** Pure: whether an idle process with these heap figures should collect. */
export function worthReclaiming(committed: number, used: number, slack = SLACK_BYTES): boolean {
  return committed - used > slack;
}

/** Pure: quiet spells, from samples of a counter that grows while the gateway works. */
export class QuietSpell {
  readonly #idleMs: number;
  #seen: number;
  #since: number;
  #done = false;

  constructor(activity: number, now: number, idleMs: number) {
    this.#idleMs = idleMs;
    this.#seen = activity;
    this.#since = now;
  }

  /** Takes a sample; true when the spell has lasted `idleMs` and nothing was collected in it yet. */
  due(activity: number, now: number): boolean {
    if (activity !== this.#seen) {
      this.#seen = activity;
      this.#since = now;
      this.#done = false;
      return false;
    }
    return !this.#done && now - this.#since >= this.#idleMs;
  }

  /** The spell has had its collection. */
  collected(): void {
    this.#done = true;
  }
}

export interface Reclaimer {
  /** Collections run so far. */
  readonly runs: number;
  /** Takes a sample now and collects if it is due (tests). */
  check(): boolean;
  stop(): void;
}

export interface ReclaimTiming {
  readonly idleMs?: number;
  readonly checkMs?: number;
}

/** `activity` is any number that grows while the gateway works. */
export function startMemoryReclaim(activity: () => number, timing: ReclaimTiming = {}): Reclaimer {
  const { idleMs = IDLE_MS, checkMs = CHECK_MS } = timing;
  const spell = new QuietSpell(activity(), performance.now(), idleMs);
  let runs = 0;
  const check = () => {
    if (!spell.due(activity(), performance.now())) return false;
    const h = v8.getHeapStatistics();
    if (!worthReclaiming(h.total_heap_size, h.used_heap_size)) return false;
    collector()({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    spell.collected();
    runs++;
    return true;
  };
  const timer = setInterval(check, checkMs).unref();
  return {
    get runs() {
      return runs;
    },
    check,
    stop: () => clearInterval(timer),
  };
}
