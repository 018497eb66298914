import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { copyObject } from '../../../fuse/fs/copy.ts';
import { MemoryBudget } from '../../../fuse/fs/memory-budget.ts';
import { Prefetcher } from '../../../fuse/fs/prefetcher.ts';
import { BandwidthLimitedClient } from '../../../fuse/s3/bandwidth-client.ts';
import { MemoryObjectClient } from '../../../fuse/s3/memory-client.ts';
import type { ByteRange, ObjectClient } from '../../../fuse/s3/object-client.ts';
import { MiB } from './make-fs.ts';

describe('server-side copies', () => {
  it('copy above the single-copy limit in parts, keeping metadata', async () => {
    const mem = new MemoryObjectClient();
    const data = randomBytes(13 * MiB);
    await mem.put('src', data, { metadata: { mode: '33188' } });
    await copyObject(mem, 'src', 'dst', data.length, undefined, 4, {
      singleCopy: 5 * MiB,
      partSize: 5 * MiB,
    });
    expect(mem.calls.get('uploadPartCopy')).toBe(3);
    expect(mem.calls.get('copy')).toBeUndefined();
    expect(mem.objects.get('dst')?.body.equals(data)).toBe(true);
    expect(mem.objects.get('dst')?.metadata.mode).toBe('33188');
  });
});

/** Counts GETs in flight at once, and records the ranges asked for. */
function countingGets(inner: ObjectClient): { client: ObjectClient; peak: () => number; ranges: ByteRange[] } {
  let now = 0;
  let peak = 0;
  const ranges: ByteRange[] = [];
  const client = Object.create(inner) as ObjectClient;
  client.get = async (key: string, range?: ByteRange) => {
    if (range) ranges.push(range);
    peak = Math.max(peak, ++now);
    try {
      return await inner.get(key, range);
    } finally {
      now--;
    }
  };
  return { client, peak: () => peak, ranges };
}

describe('readahead over a slow link', () => {
  it('has several ranged GETs in flight for a sequential reader, within the memory budget', async () => {
    const mem = new MemoryObjectClient();
    const data = randomBytes(64 * MiB);
    await mem.put('big', data);
    const link = new BandwidthLimitedClient(mem, { latencyMs: 20, bytesPerSecond: 2 ** 30 });
    const { client, peak } = countingGets(link);
    const budget = new MemoryBudget(56 * MiB);
    const p = new Prefetcher(client, 'big', data.length, budget, 48 * MiB);
    for (let at = 0; at < data.length; at += 128 * 1024) {
      const got = await p.read(at, 128 * 1024);
      expect(got.equals(data.subarray(at, at + 128 * 1024))).toBe(true);
      expect(budget.used).toBeLessThanOrEqual(56 * MiB);
    }
    p.close();
    expect(peak()).toBeGreaterThanOrEqual(4);
    expect(budget.used).toBe(0);
  });

  it('asks for the next chunks while the reader is still inside the first one', async () => {
    const mem = new MemoryObjectClient();
    const data = randomBytes(10 * MiB);
    await mem.put('ten', data);
    const link = new BandwidthLimitedClient(mem, { latencyMs: 20, bytesPerSecond: 2 ** 30 });
    const { client, ranges } = countingGets(link);
    const budget = new MemoryBudget(64 * MiB);
    expect(budget.tryAcquire(MiB)).toBe(true);
    const p = new Prefetcher(client, 'ten', data.length, budget, 64 * MiB, data.subarray(0, MiB));
    for (let at = 0; at < MiB; at += 128 * 1024) await p.read(at, 128 * 1024);
    // Reading the first MiB (already here from open) must not wait, yet put most of the file in
    // flight: on a 20 ms link, each round trip spent ramping up costs as much as 2 MB of transfer.
    expect(Math.max(...ranges.map((r) => r.end))).toBeGreaterThanOrEqual(5 * MiB);
    for (let at = MiB; at < data.length; at += 128 * 1024) {
      expect((await p.read(at, 128 * 1024)).equals(data.subarray(at, at + 128 * 1024))).toBe(true);
    }
    p.close();
    expect(budget.used).toBe(0);
  });

  it('reads just what is asked when the budget is spent', async () => {
    const mem = new MemoryObjectClient();
    await mem.put('f', randomBytes(4 * MiB));
    const budget = new MemoryBudget(MiB);
    expect(budget.tryAcquire(MiB)).toBe(true);
    const p = new Prefetcher(mem, 'f', 4 * MiB, budget, 8 * MiB);
    mem.calls.clear();
    expect((await p.read(0, 4096)).length).toBe(4096);
    expect(mem.calls.get('get')).toBe(1);
    expect(budget.used).toBe(MiB);
  });
});
