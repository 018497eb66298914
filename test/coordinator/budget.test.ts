// Budgets: a started drone's planned cost is held against the budget until it ends, refusals are
// logged once and then rarely, and past running time keeps the price it ran at.

import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { spentToday } from '../../coordinator/cost.ts';
import { buildStatus } from '../../coordinator/status/view.ts';
import { job, makeWorld, run, type World } from './helpers/world.ts';

let worlds: World[] = [];
afterEach(() => {
  for (const w of worlds)
    try {
      w.registry.close();
    } catch {
      // closed by a restart
    }
  worlds = [];
});

describe('budgets', () => {
  it('hold each drone\'s planned cost until it ends, and log a refusal once, not every interval', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'warn' }, new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }));
    // A drone: 2 cores × $0.05 × (2 min boot + 1 h run) = $0.1033; $0.25 a day pays for two.
    const w = makeWorld({ quota: 10, budgetPerDay: 0.25, log });
    worlds.push(w);
    w.batch.pending = Array.from({ length: 10 }, (_, i) => job(`j${i}`, 2));
    await run(w, 30);
    // Before: two in the first interval, then two more each interval (the hold was forgotten).
    expect(w.registry.all()).toHaveLength(2);
    expect(w.coordinator.last!.pools[0]!.reason.rule).toBe('budget');
    const refusals = lines.filter((l) => l.includes('would pass the budget'));
    expect(refusals).toHaveLength(1);
    await run(w, 600); // ten minutes on: said once more
    expect(lines.filter((l) => l.includes('would pass the budget'))).toHaveLength(2);
  });

  it('prices past running time at the price in force then', async () => {
    const w = makeWorld({ quota: 1, costPerCoreHour: 0.06 });
    worlds.push(w);
    w.batch.pending = [job('a', 2)];
    await run(w, 7);
    w.clock.advance(3_600_000);
    await run(w, 1);
    const before = buildStatus(w.registry.all(), [{ name: 'cloud', quota: 1, costPerCoreHour: 0.06 }], () => 2, undefined, w.clock.now()).sites[0]!.cost;
    // The admin changes the price and restarts: the hour already run keeps its price.
    const after = buildStatus(w.registry.all(), [{ name: 'cloud', quota: 1, costPerCoreHour: 6 }], () => 2, undefined, w.clock.now()).sites[0]!.cost;
    expect(before).toBeCloseTo(0.12, 2);
    expect(after).toBe(before);
    expect(spentToday(w.registry.all(), { name: 'cloud', costPerCoreHour: 6 }, () => 2, w.clock.now())).toBeCloseTo(before, 4);
  });
});
