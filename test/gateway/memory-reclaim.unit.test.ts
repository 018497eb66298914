// When the idle gateway's memory-reducing collection comes (gateway/memory-reclaim.ts): IDLE_MS of
// quiet after the last activity, whatever the phase of the sampling timer, and once per quiet
// spell. docs/CACHING.md, "Memory", promises it 10 s after the last request.

import { describe, expect, it } from 'vitest';
import { QuietSpell, worthReclaiming } from '../../gateway/memory-reclaim.ts';

const IDLE = 10_000;
const CHECK = 500;

/** Samples `spell` every CHECK ms from `from` to `to`; returns the times it was due. */
function sample(spell: QuietSpell, activity: (t: number) => number, from: number, to: number): number[] {
  const due: number[] = [];
  for (let t = from; t <= to; t += CHECK) {
    if (spell.due(activity(t), t)) {
      due.push(t);
      spell.collected();
    }
  }
  return due;
}

describe('QuietSpell', () => {
  it('is due IDLE to IDLE + CHECK ms after the last activity, wherever that falls between samples', () => {
    for (let end = 20_000; end < 20_000 + 2 * CHECK; end += 37) {
      // One unit of work every 10 ms until `end`, then nothing.
      const activity = (t: number) => Math.floor(Math.min(t, end) / 10);
      const spell = new QuietSpell(activity(0), 0, IDLE);
      const due = sample(spell, activity, CHECK, 60_000);
      expect(due).toHaveLength(1);
      expect(due[0]! - end).toBeGreaterThanOrEqual(IDLE);
      expect(due[0]! - end).toBeLessThanOrEqual(IDLE + CHECK);
    }
  });

  it('is due once per quiet spell, and again after new activity and a new spell', () => {
    let work = 0;
    const spell = new QuietSpell(work, 0, IDLE);
    expect(spell.due(work, 9_999)).toBe(false);
    expect(spell.due(work, 10_000)).toBe(true);
    spell.collected();
    expect(spell.due(work, 10_500)).toBe(false);
    expect(spell.due(work, 60_000)).toBe(false);
    work++;
    expect(spell.due(work, 61_000)).toBe(false);
    expect(spell.due(work, 70_999)).toBe(false);
    expect(spell.due(work, 71_000)).toBe(true);
  });

  it('stays due while the heap is not yet worth a collection', () => {
    const spell = new QuietSpell(0, 0, IDLE);
    expect(spell.due(0, 10_000)).toBe(true);
    // Not collected (too little slack): the next sample may still run it.
    expect(spell.due(0, 10_500)).toBe(true);
  });
});

describe('worthReclaiming', () => {
  it('wants more than 32 MiB committed beyond what is used', () => {
    expect(worthReclaiming(100 * 2 ** 20, 68 * 2 ** 20)).toBe(false);
    expect(worthReclaiming(100 * 2 ** 20, 67 * 2 ** 20)).toBe(true);
  });
});
