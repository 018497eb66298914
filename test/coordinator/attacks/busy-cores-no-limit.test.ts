// Attack: a running job with no time limit (a partition with MaxTime=INFINITE and no DefaultTime,
// common on small clusters) that has run longer than its kind's learned run time. busy-cores.ts
// answers "its cores free in 0 ms": free now, although the batch system says the job runs. By
// definition about a tenth of a kind's runs outlast its 90th percentile, and the longest are the
// ones still running, so a busy cluster always has such cores; the spot-tail decision
// (spot-tail.ts), timed by these starts, then sees the work ending sooner than it will and sends
// the tail on demand on a false end. A hostile history does it at will: three 1 s jobs of a name
// make every later run of that name "free now" a second after it starts.
//
// Expected (docs/COORDINATOR.md, "When a busy core frees"): "a job already past its estimate frees
// in half the time left to its limit" — with no limit there is no time left to halve; a core whose
// end cannot be told is timed "as one whose job is unknown", never as free now.

import { describe, expect, it } from 'vitest';
import { freesIn } from '../../../coordinator/busy-cores.ts';
import { RunTimeHistory } from '../../../coordinator/run-times.ts';

describe('when a busy core frees: a job with no time limit past its estimate', () => {
  it('is not taken for a free core', () => {
    const h = new RunTimeHistory();
    h.add([1, 2, 3, 4, 5].map((i) => ({ id: String(i), user: 'alice', partition: 'hybrid', name: 'train', elapsedMs: 600_000 })));
    const now = Date.parse('2026-11-24T12:00:00Z');
    // Running for 20 minutes, twice what `train` runs; it gives no --time.
    const job = { node: 'home1', cpus: 1, partition: 'hybrid', user: 'alice', name: 'train', startedAt: now - 1_200_000 };
    const at = freesIn(job, now, h.summary(), 3_600_000);
    expect(at === undefined || at > 0, `frees in ${at} ms while it runs`).toBe(true);
  });
});
