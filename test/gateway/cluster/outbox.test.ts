// The primary's bound on what waits for a worker to read: a worker whose channel stops draining
// is declared stuck once, nothing more is queued for it, and a draining one is never.

import type { Worker } from 'node:cluster';
import { describe, expect, it } from 'vitest';
import { Outbox } from '../../../gateway/cluster/outbox.ts';
import type { ToWorker } from '../../../gateway/cluster/messages.ts';

/** A worker whose channel takes a message only when `drain()` is called (a frozen one never does). */
function fakeWorker() {
  const held: (() => void)[] = [];
  const sent: ToWorker[] = [];
  const w = {
    isConnected: () => true,
    send(m: ToWorker, cb: () => void) {
      sent.push(m);
      held.push(cb);
      return true;
    },
  };
  return { worker: w as unknown as Worker, sent, drain: () => held.splice(0).forEach((cb) => cb()) };
}

const big = (i: number): ToWorker => ({ t: 'invalidate', id: i, keys: [`k${i}-${'x'.repeat(1000)}`] });

describe('worker outbox', () => {
  it('declares a worker that stops reading stuck once, and queues nothing more for it', () => {
    const stuck: number[] = [];
    const box = new Outbox((_w, bytes) => stuck.push(bytes), 10_000);
    const f = fakeWorker();
    for (let i = 0; i < 50; i++) box.send(f.worker, big(i));
    expect(stuck).toHaveLength(1);
    expect(stuck[0]).toBeGreaterThan(10_000);
    expect(f.sent.length).toBeLessThan(10);
    expect(box.largest()).toBe(0);
  });

  it('never overflows for a worker that reads what it is sent', () => {
    const stuck: number[] = [];
    const box = new Outbox((_w, bytes) => stuck.push(bytes), 10_000);
    const f = fakeWorker();
    for (let i = 0; i < 500; i++) {
      box.send(f.worker, big(i));
      if (i % 5 === 4) f.drain();
    }
    expect(stuck).toEqual([]);
    expect(f.sent).toHaveLength(500);
    f.drain();
    expect(box.largest()).toBe(0);
  });
});
