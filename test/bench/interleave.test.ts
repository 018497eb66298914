import { describe, expect, it } from 'vitest';
import { interleavingCheck, oneRound, takeTurns } from '../../bench/interleave.ts';

const events = (c: string, peers: string) => [...peers].map((peer) => ({ case: c, peer }));

describe('takeTurns', () => {
  it('visits every peer once per run before the next run: A, B, C, D, then again', async () => {
    const order: string[] = [];
    await takeTurns(3, ['A', 'B', 'C', 'D'], async (peer, run) => void order.push(`${peer}${run}`));
    expect(order.join(' ')).toBe('A1 B1 C1 D1 A2 B2 C2 D2 A3 B3 C3 D3');
  });
  it('leaves out a peer once it failed, and stops on abort', async () => {
    const failed = new Set<string>();
    const abort = new AbortController();
    const order: string[] = [];
    await takeTurns(
      4,
      ['A', 'B', 'C'],
      async (peer, run) => {
        order.push(`${peer}${run}`);
        if (peer === 'B' && run === 1) failed.add('B');
        if (peer === 'C' && run === 3) abort.abort();
      },
      { signal: abort.signal, skip: (p) => failed.has(p) },
    );
    expect(order.join(' ')).toBe('A1 B1 C1 A2 C2 A3 C3');
  });
  it('oneRound is one run of the same', async () => {
    const order: string[] = [];
    await oneRound(['x', 'y'], async (p) => void order.push(p));
    expect(order).toEqual(['x', 'y']);
  });
});

describe('interleavingCheck', () => {
  it('accepts peers that took turns, and a peer that stopped early', () => {
    expect(interleavingCheck(events('c', 'ABCABCABC'))).toEqual({ cases: 1, problems: [] });
    expect(interleavingCheck(events('c', 'ABCACAC'))).toEqual({ cases: 1, problems: [] });
  });
  it("flags one peer's runs in a row", () => {
    expect(interleavingCheck(events('4 KiB', 'AAABBB')).problems).toEqual([
      "4 KiB: A's run 2 came before B's run 1",
    ]);
    // The order inside a run may vary (A B, then B A); a peer may not start a third run early.
    expect(interleavingCheck(events('c', 'ABBA')).problems).toEqual([]);
    expect(interleavingCheck(events('c', 'ABCBBAC')).problems).toEqual(["c: B's run 3 came before A's run 2"]);
  });
  it('does not count cases with one peer or one run each', () => {
    expect(interleavingCheck([...events('solo', 'AAA'), ...events('once', 'ABC')])).toEqual({
      cases: 0,
      problems: [],
    });
  });
  it('flags samples a scenario returned without reporting them as they came', () => {
    const check = interleavingCheck(events('c', 'AB'), [
      { case: 'c', peer: 'A', samples: [1, 2] },
      { case: 'c', peer: 'B', samples: [1, 2] },
    ]);
    expect(check.problems).toEqual(['c: samples were not reported as they were measured, so their order is unknown']);
  });
});
