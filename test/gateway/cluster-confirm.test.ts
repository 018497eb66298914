// The primary's confirmation of invalidations (gateway/cluster/confirm.ts), with fake links: who
// is told, who must answer, and what happens to a worker that does not answer or dies first.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { Confirmations } from '../../gateway/cluster/confirm.ts';
import { INVALIDATE_CONFIRM_MS } from '../../gateway/cluster/messages.ts';

function setup(serving: number[], starting: number[] = [], marking?: Promise<void>) {
  const log: string[] = [];
  const c = new Confirmations({
    serving: () => serving,
    all: () => [...serving, ...starting],
    relay: (w, seq, keys) => log.push(`relay ${w} ${seq} ${keys.join(',')}`),
    confirm: (w, id) => log.push(`confirm ${w} ${id}`),
    progress: (w, id) => log.push(`progress ${w} ${id}`),
    mark: async (keys) => {
      log.push(`mark ${keys.join(',')}`);
      await marking;
      log.push('written');
    },
    kill: (w) => log.push(`kill ${w}`),
  });
  return { c, log };
}

const settle = () => new Promise((r) => setImmediate(r));

afterEach(() => vi.useRealTimers());

describe('Confirmations', () => {
  it('confirms to the writer once every other serving worker answered, not before', async () => {
    const { c, log } = setup([1, 2, 3], [4]);
    c.start(1, 7, ['k']);
    expect(log).toEqual(['relay 2 1 k', 'relay 3 1 k', 'relay 4 1 k']);
    c.answered(2, 1);
    await settle();
    expect(log).not.toContain('confirm 1 7');
    // A starting worker is told but not waited for.
    c.answered(3, 1);
    await settle();
    expect(log.at(-1)).toBe('confirm 1 7');
  });

  it('confirms at once when the writer is the only serving worker', async () => {
    const { c, log } = setup([1]);
    c.start(1, 3, ['k']);
    await settle();
    expect(log).toEqual(['confirm 1 3']);
  });

  it('records the write, kills a worker silent for too long, and confirms when it is gone', async () => {
    vi.useFakeTimers();
    const { c, log } = setup([1, 2]);
    c.start(1, 5, ['a', 'b']);
    await vi.advanceTimersByTimeAsync(INVALIDATE_CONFIRM_MS - 100);
    expect(log).toEqual(['relay 2 1 a,b']);
    await vi.advanceTimersByTimeAsync(200);
    expect(log).toEqual(['relay 2 1 a,b', 'mark a,b', 'kill 2', 'written']);
    c.gone(2);
    await vi.advanceTimersByTimeAsync(0);
    expect(log.at(-1)).toBe('confirm 1 5');
    expect(log.filter((l) => l.startsWith('mark'))).toHaveLength(1);
  });

  it('a worker that dies before it answered gets the write recorded before the writer is confirmed', async () => {
    const { c, log } = setup([1, 2]);
    c.start(1, 9, ['k']);
    c.gone(2);
    await c.marksWritten();
    await settle();
    expect(log).toEqual(['relay 2 1 k', 'mark k', 'written', 'confirm 1 9']);
  });

  it('kills a silent worker at 5 s without waiting for the record, and confirms once it is gone and the record written', async () => {
    vi.useFakeTimers();
    let written!: () => void;
    const { c, log } = setup([1, 2, 3], [], new Promise((r) => (written = r)));
    c.start(1, 5, ['a', 'b']);
    c.answered(3, 1);
    await vi.advanceTimersByTimeAsync(INVALIDATE_CONFIRM_MS);
    // A record of many keys may take a while: the stuck worker does not get that long.
    expect(log).toEqual(['relay 2 1 a,b', 'relay 3 1 a,b', 'mark a,b', 'kill 2']);
    let scanned = false;
    void c.marksWritten().then(() => (scanned = true));
    c.gone(2);
    await vi.advanceTimersByTimeAsync(1000);
    expect(log).not.toContain('confirm 1 5');
    expect(scanned).toBe(false);
    written();
    await vi.advanceTimersByTimeAsync(0);
    expect(log.slice(-2)).toEqual(['written', 'confirm 1 5']);
    expect(scanned).toBe(true);
  });

  it('kills a worker for silence, not for the time a long invalidation takes, and tells the writer it progresses', async () => {
    vi.useFakeTimers();
    const { c, log } = setup([1, 2, 3]);
    c.start(1, 5, ['a']);
    // Worker 2 reports a part done every 3 s, for 12 s; worker 3 says nothing.
    for (let t = 0; t < 4; t++) {
      await vi.advanceTimersByTimeAsync(3000);
      c.progressed(2, 1);
    }
    expect(log.filter((l) => l.startsWith('kill'))).toEqual(['kill 3']);
    expect(log.filter((l) => l.startsWith('progress'))).toEqual(Array(4).fill('progress 1 5'));
    c.gone(3);
    await vi.advanceTimersByTimeAsync(4900);
    expect(log).not.toContain('kill 2');
    c.answered(2, 1);
    await vi.advanceTimersByTimeAsync(0);
    expect(log.at(-1)).toBe('confirm 1 5');
    // A report after the confirmation changes nothing.
    c.progressed(2, 1);
    expect(log.at(-1)).toBe('confirm 1 5');
  });

  it('a late answer after a confirmation changes nothing', async () => {
    const { c, log } = setup([1, 2]);
    c.start(1, 1, ['k']);
    c.answered(2, 1);
    c.answered(2, 1);
    await settle();
    expect(log.filter((l) => l.startsWith('confirm'))).toEqual(['confirm 1 1']);
  });
});
