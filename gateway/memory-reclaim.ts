// Giving memory back after a burst. A forward proxy asked for many distinct origins makes a lot
// of short-lived garbage per request (an undici pool and client per origin, its error, our
// answer); V8 grows the heap to hold it, and after the burst frees the objects but keeps the pages
// (measured: 20,000 refused origins, heap used back to 28 MiB of 240 MiB committed, RSS 317 MiB).
// Its memory reducer, which would give them back, waits for a low allocation rate, and it judges
// that rate from samples taken at collections — none happen in an idle process, so the burst's
// rate stands and the pages stay for good (still there after 90 s idle).
//
// So the gateway asks for the memory-reducing collection itself: once the process has answered no
// request and moved no body byte for a whole interval, and the heap holds much more than it uses. That collection (V8's
// "last resort": it compacts and returns pooled pages) pauses the process for some 0.2 s per
// 250 MiB, which only an idle gateway can afford; a busy one never runs it.

import v8 from 'node:v8';
import vm from 'node:vm';

/** An idle gateway is one that answered nothing for this long; checked as often. */
const IDLE_INTERVAL_MS = 10_000;
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
export function worthReclaiming(busy: boolean, committed: number, used: number, slack = SLACK_BYTES): boolean {
  return !busy && committed - used > slack;
}

export interface Reclaimer {
  /** Collections run so far. */
  readonly runs: number;
  /** Runs the check now (tests); `activity` is any number that grows while the gateway works. */
  check(): boolean;
  stop(): void;
}

export function startMemoryReclaim(activity: () => number, intervalMs = IDLE_INTERVAL_MS): Reclaimer {
  let seen = activity();
  let runs = 0;
  const check = () => {
    const now = activity();
    const busy = now !== seen;
    seen = now;
    const h = v8.getHeapStatistics();
    if (!worthReclaiming(busy, h.total_heap_size, h.used_heap_size)) return false;
    collector()({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    runs++;
    return true;
  };
  const timer = setInterval(check, intervalMs).unref();
  return {
    get runs() {
      return runs;
    },
    check,
    stop: () => clearInterval(timer),
  };
}
