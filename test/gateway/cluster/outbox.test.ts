// The primary's bound on what waits for a worker to read: a worker whose channel stops draining
// is declared stuck once, nothing more is queued for it, and a draining one is never, also when
// one message (a purge's invalidation) holds more than the bound.

import type { Worker } from 'node:cluster';
import { describe, expect, it } from 'vitest';
import { Outbox } from '../../../gateway/cluster/outbox.ts';
import { invalidationParts, type ToWorker } from '../../../gateway/cluster/messages.ts';

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

  it('sends an invalidation larger than the bound in parts to a reading worker, and kills nothing', () => {
    const stuck: number[] = [];
    const box = new Outbox((_w, bytes) => stuck.push(bytes), 10_000);
    const f = fakeWorker();
    // 100 keys of 100 bytes: more than the bound of 10,000 bytes in one message.
    const keys = Array.from({ length: 100 }, (_, i) => `${i}`.padEnd(100, 'x'));
    box.sendParts(f.worker, invalidationParts(9, keys, 1000));
    // One part at a time: the next goes once the channel took the one before.
    expect(f.sent).toHaveLength(1);
    expect(box.largest()).toBeLessThan(1100);
    for (let i = 0; i < 20; i++) f.drain();
    expect(stuck).toEqual([]);
    const parts = f.sent as Extract<ToWorker, { t: 'invalidate' }>[];
    expect(parts.flatMap((p) => p.keys)).toEqual(keys);
    expect(parts.map((p) => p.more ?? false)).toEqual([...parts.slice(1).map(() => true), false]);
    f.drain();
    expect(box.largest()).toBe(0);
  });

  it('keeps what is sent during a message in parts behind it, in order', () => {
    const box = new Outbox(() => undefined, 10_000);
    const f = fakeWorker();
    const keys = ['a'.repeat(900), 'b'.repeat(900), 'c'.repeat(900)];
    box.sendParts(f.worker, invalidationParts(1, keys, 1000));
    box.send(f.worker, { t: 'evicted', key: 'z', path: '/p' });
    box.sendParts(f.worker, invalidationParts(2, ['d'], 1000));
    box.send(f.worker, { t: 'stop' });
    for (let i = 0; i < 10; i++) f.drain();
    const order = f.sent.map((m) => (m.t === 'invalidate' ? `${m.id}:${m.keys[0]![0]}` : m.t));
    expect(order).toEqual(['1:a', '1:b', '1:c', 'evicted', '2:d', 'stop']);
  });

  it('declares a worker stuck that stops reading during a message in parts, by what waits behind it', () => {
    const stuck: number[] = [];
    const box = new Outbox((_w, bytes) => stuck.push(bytes), 10_000);
    const f = fakeWorker();
    const keys = Array.from({ length: 100 }, (_, i) => `${i}`.padEnd(100, 'x'));
    box.sendParts(f.worker, invalidationParts(1, keys, 1000));
    for (let i = 0; i < 20; i++) box.send(f.worker, big(i));
    expect(stuck).toHaveLength(1);
    expect(f.sent).toHaveLength(1);
    expect(box.largest()).toBe(0);
  });
});
