// A long invalidation relayed in parts (messages.ts invalidationParts): the parts are bounded and
// together hold every key once, in order; a worker drops each part's keys as it comes, reports
// each part done, and answers only after the last part, once every file is gone.

import { mkdtemp, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { Cache } from '../../../gateway/cache/cache.ts';
import { WorkerCoordinator } from '../../../gateway/cluster/coordinator.ts';
import { INVALIDATE_PRIMARY_WAIT_MS, invalidationParts, type ToPrimary } from '../../../gateway/cluster/messages.ts';
import { readWrites } from '../../../gateway/cache/write-marks.ts';

describe('invalidationParts', () => {
  it('splits keys into bounded parts that hold every key once, in order', () => {
    const keys = Array.from({ length: 1000 }, (_, i) => `/cvmfs/repo/${i}/${'p'.repeat(i % 90)}`);
    const parts = [...invalidationParts(4, keys, 4096)];
    expect(parts.length).toBeGreaterThan(10);
    expect(parts.flatMap((p) => p.keys)).toEqual(keys);
    for (const p of parts) {
      expect(p.id).toBe(4);
      expect(JSON.stringify(p.keys).length).toBeLessThanOrEqual(4096 + 2);
    }
    expect(parts.map((p) => p.more === true)).toEqual([...parts.slice(1).map(() => true), false]);
  });

  it('sends a short invalidation as one message, and a key longer than a part alone', () => {
    expect([...invalidationParts(1, ['a', 'b'], 4096)]).toEqual([{ t: 'invalidate', id: 1, keys: ['a', 'b'] }]);
    const long = 'L'.repeat(5000);
    const parts = [...invalidationParts(2, ['a', long, 'b'], 4096)];
    expect(parts.map((p) => p.keys)).toEqual([['a'], [long], ['b']]);
  });
});

describe('a worker receiving an invalidation in parts', () => {
  it('drops each part at once and answers after the last, with the files gone', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'estuary-parts-'));
    const entries = new Map<string, { path: string }>();
    for (const k of ['a', 'b', 'c']) {
      const path = join(dir, k);
      await writeFile(path, k);
      entries.set(k, { path });
    }
    const dropped: string[] = [];
    const cache = {
      disk: { peek: (k: string) => entries.get(k), forget: (k: string) => entries.delete(k) },
      invalidateHere: (k: string) => dropped.push(k),
    } as unknown as Cache;
    const sent: ToPrimary[] = [];
    const c = new WorkerCoordinator(cache, (m) => sent.push(m), { claimDeadlineMs: 1000, followSilenceMs: 1000 });
    for (const part of invalidationParts(7, ['a', 'b', 'c'], 3)) {
      c.onMessage(part);
      expect(dropped).toEqual(['a', 'b', 'c'].slice(0, dropped.length));
      await new Promise((r) => setImmediate(r));
      // Until the last part, only word that it progresses (the primary then knows it is alive).
      if (part.more) expect(sent.every((m) => m.t === 'invalidated' && m.more === true)).toBe(true);
    }
    expect(dropped).toEqual(['a', 'b', 'c']);
    await new Promise((r) => setTimeout(r, 50));
    expect(sent).toEqual([
      { t: 'invalidated', id: 7, more: true },
      { t: 'invalidated', id: 7, more: true },
      { t: 'invalidated', id: 7 },
    ]);
    for (const k of ['a', 'b', 'c']) await expect(stat(join(dir, k))).rejects.toThrow();
  });
});

describe('a writer waiting on a long invalidation', () => {
  it('waits on while the primary reports progress, and fires its guard only after its silence', async () => {
    const root = await mkdtemp(join(tmpdir(), 'estuary-guard-'));
    const cache = { disk: { root } } as unknown as Cache;
    const sent: ToPrimary[] = [];
    const stalls: string[] = [];
    const c = new WorkerCoordinator(cache, (m) => sent.push(m), {
      claimDeadlineMs: 1000,
      followSilenceMs: 1000,
      onStall: (what, key) => stalls.push(`${what} ${key}`),
    });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      let answered = false;
      const done = c.invalidated(['k1', 'k2']).then(() => (answered = true));
      const id = (sent[0] as { id: number }).id;
      for (let i = 0; i < 3; i++) {
        await vi.advanceTimersByTimeAsync(INVALIDATE_PRIMARY_WAIT_MS - 1000);
        c.onMessage({ t: 'invalidated', id, more: true });
      }
      expect(stalls).toEqual([]);
      expect(answered).toBe(false);
      await vi.advanceTimersByTimeAsync(INVALIDATE_PRIMARY_WAIT_MS);
      expect(stalls).toEqual(['invalidate k1']);
      vi.useRealTimers();
      await done;
      expect([...(await readWrites(root, Date.now())).keys()].sort()).toEqual(['k1', 'k2']);
      // Word after the guard fired changes nothing.
      c.onMessage({ t: 'invalidated', id, more: true });
      expect(stalls).toEqual(['invalidate k1']);
    } finally {
      vi.useRealTimers();
    }
  });
});
