import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { copyObject } from '../../../fuse/fs/copy.ts';
import { MemoryBudget } from '../../../fuse/fs/memory-budget.ts';
import { NextFilePrefetch } from '../../../fuse/fs/next-file.ts';
import { INITIAL_WINDOW, Prefetcher, pieceSize } from '../../../fuse/fs/prefetcher.ts';
import { BandwidthLimitedClient } from '../../../fuse/s3/bandwidth-client.ts';
import { MemoryObjectClient } from '../../../fuse/s3/memory-client.ts';
import type { ByteRange, ObjectClient, OnPiece } from '../../../fuse/s3/object-client.ts';
import { MiB } from './make-fs.ts';

describe('server-side copies', () => {
  it('copy above the single-copy limit in parts, keeping metadata', async () => {
    const mem = new MemoryObjectClient();
    const data = randomBytes(13 * MiB);
    await mem.put('src', data, { metadata: { mode: '33188' } });
    await copyObject({ client: mem }, 'src', 'dst', data.length, undefined, 4, {
      singleCopy: 5 * MiB,
      partSize: 5 * MiB,
    });
    expect(mem.calls.get('uploadPartCopy')).toBe(3);
    expect(mem.calls.get('copy')).toBeUndefined();
    expect(mem.objects.get('dst')?.body.equals(data)).toBe(true);
    expect(mem.objects.get('dst')?.metadata.mode).toBe('33188');
  });
});

/**
 * `size` random bytes stored as `key`, behind a link of `latencyMs` when given, read through a
 * client that counts its GETs.
 */
async function countedObject(key: string, size: number, latencyMs?: number) {
  const mem = new MemoryObjectClient();
  const data = randomBytes(size);
  await mem.put(key, data);
  const inner =
    latencyMs === undefined ? mem : new BandwidthLimitedClient(mem, { latencyMs, bytesPerSecond: 2 ** 30 });
  return { data, ...countingGets(inner) };
}

/** Counts GETs in flight at once, and records the ranges asked for. */
function countingGets(inner: ObjectClient): { client: ObjectClient; peak: () => number; ranges: ByteRange[] } {
  let now = 0;
  let peak = 0;
  const ranges: ByteRange[] = [];
  const client = Object.create(inner) as ObjectClient;
  const counted = async <T>(range: ByteRange | undefined, call: () => Promise<T>): Promise<T> => {
    if (range) ranges.push(range);
    peak = Math.max(peak, ++now);
    try {
      return await call();
    } finally {
      now--;
    }
  };
  client.get = (key: string, range?: ByteRange) => counted(range, () => inner.get(key, range));
  client.getPieces = (key: string, range: ByteRange, onPiece: OnPiece) =>
    counted(range, () => inner.getPieces(key, range, onPiece));
  return { client, peak: () => peak, ranges };
}

describe('readahead over a slow link', () => {
  it('has several ranged GETs in flight for a sequential reader, within the memory budget', async () => {
    const { data, client, peak } = await countedObject('big', 64 * MiB, 20);
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

  it('keeps readahead flowing under the smallest memory budget', async () => {
    const { data, client, ranges } = await countedObject('big', 64 * MiB);
    // --memory-limit's minimum with the default --readahead: GETs as large as the window allows
    // would not fit twice under the readahead share, and reads would fall back to one GET each.
    const budget = new MemoryBudget(64 * MiB);
    const p = new Prefetcher(client, 'big', data.length, budget, 64 * MiB);
    for (let at = 0; at < data.length; at += 128 * 1024) {
      expect((await p.read(at, 128 * 1024)).equals(data.subarray(at, at + 128 * 1024))).toBe(true);
    }
    p.close();
    expect(Math.max(...ranges.map((r) => r.end - r.start))).toBeLessThanOrEqual(8 * MiB);
    expect(ranges.length).toBeLessThan(20);
  });

  it('asks for the next chunks while the reader is still inside the first one', async () => {
    const { data, client, ranges } = await countedObject('ten', 10 * MiB, 20);
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

  it('answers a read as soon as its bytes have arrived, before the rest of the GET', async () => {
    const mem = new MemoryObjectClient();
    const data = randomBytes(4 * MiB);
    await mem.put('f', data);
    // A GET that delivers its first half and then stalls until released.
    const stalls: (() => void)[] = [];
    const stalled = Object.create(mem) as ObjectClient;
    stalled.getPieces = async (key: string, range: ByteRange, onPiece: OnPiece) => {
      const body = await mem.get(key, range);
      onPiece(body.subarray(0, body.length >> 1));
      await new Promise<void>((resolve) => stalls.push(resolve));
      onPiece(body.subarray(body.length >> 1));
      return body.length;
    };
    const budget = new MemoryBudget(16 * MiB);
    const p = new Prefetcher(stalled, 'f', data.length, budget, 4 * MiB);
    // The first GET is 1 MiB: its first half is readable while the GET is still open.
    expect((await p.read(0, 128 * 1024)).equals(data.subarray(0, 128 * 1024))).toBe(true);
    let later = false;
    const tail = p.read(768 * 1024, 128 * 1024).then((b) => ((later = true), b));
    await new Promise((r) => setImmediate(r));
    expect(later).toBe(false);
    for (const go of stalls) go();
    expect((await tail).equals(data.subarray(768 * 1024, 896 * 1024))).toBe(true);
    p.close();
  });

  it('serves reads the kernel sends out of order from the same window', async () => {
    const { data, client, ranges } = await countedObject('f', 24 * MiB);
    const budget = new MemoryBudget(64 * MiB);
    const p = new Prefetcher(client, 'f', data.length, budget, 16 * MiB);
    const step = 128 * 1024;
    // After the first half MiB, eight at a time, the later ones first, as a 1 MiB kernel readahead
    // may deliver them (so batches straddle the 8 MiB GETs); and once, a read from well behind.
    for (let at = 0; at < MiB / 2; at += step) expect((await p.read(at, step)).equals(data.subarray(at, at + step))).toBe(true);
    for (let at = MiB / 2; at < data.length; at += 8 * step) {
      const offsets = Array.from({ length: 8 }, (_, i) => at + (7 - i) * step);
      const got = await Promise.all(offsets.map((o) => p.read(o, step)));
      offsets.forEach((o, i) => expect(got[i]!.equals(data.subarray(o, o + step))).toBe(true));
    }
    const before = ranges.length;
    expect((await p.read(data.length - 3 * MiB, step)).equals(data.subarray(-3 * MiB, -3 * MiB + step))).toBe(
      true,
    );
    p.close();
    // Each byte was fetched once, the late read aside: no read was taken for a seek that
    // restarts the window.
    expect(ranges.slice(0, before).reduce((n, r) => n + r.end - r.start, 0)).toBe(data.length);
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

describe('a guess of the next file', () => {
  const window = 64 * MiB;
  async function guessing() {
    const mem = new MemoryObjectClient();
    for (const k of ['n1', 'n2', 'n3']) await mem.put(k, randomBytes(100 * MiB));
    const budget = new MemoryBudget(1024 * MiB);
    return { mem, budget, next: new NextFilePrefetch(mem, budget, window) };
  }
  const unchanged = (mem: MemoryObjectClient, key: string) => () => mem.head(key);
  const listed = (mem: MemoryObjectClient, key: string) => ({ size: 100 * MiB, etag: mem.objects.get(key)!.etag });

  it('grows as the reader nears it, in readahead-sized GETs, to 16 MiB past its first window until one is taken', async () => {
    const { mem, next } = await guessing();
    next.start('/n1', 'n1', listed(mem, 'n1'), 0);
    expect(next.guessedUpTo('/n1')).toBe(INITIAL_WINDOW);
    next.reach('/n1', 2 * MiB);
    expect(next.guessedUpTo('/n1')).toBe(INITIAL_WINDOW + 16 * MiB);
    next.reach('/n1', 90 * MiB);
    expect(next.guessedUpTo('/n1')).toBe(INITIAL_WINDOW + 16 * MiB);
    const got = await next.take('/n1', unchanged(mem, 'n1'));
    expect(got?.ahead.map((c) => [c.start, c.end])).toEqual([[INITIAL_WINDOW, INITIAL_WINDOW + 16 * MiB]]);

    // Taken: the next guess may reach as far as the reader's own window, one GET at a time.
    next.start('/n2', 'n2', listed(mem, 'n2'), 2 * MiB);
    expect(next.guessedUpTo('/n2')).toBe(INITIAL_WINDOW + pieceSize(window, 1024 * MiB));
    next.reach('/n2', 40 * MiB);
    expect(next.guessedUpTo('/n2')).toBe(INITIAL_WINDOW + window);
    next.reach('/n2', 100 * MiB);
    expect(next.guessedUpTo('/n2')).toBe(INITIAL_WINDOW + window);
  });

  it('is held to 16 MiB again after a guess the reader did not take', async () => {
    const { mem, budget, next } = await guessing();
    next.start('/n1', 'n1', listed(mem, 'n1'), 0);
    await next.take('/n1', unchanged(mem, 'n1'));
    next.start('/n2', 'n2', listed(mem, 'n2'), 100 * MiB);
    expect(next.guessedUpTo('/n2')).toBe(INITIAL_WINDOW + window);
    next.drop('/n2', true);
    next.start('/n3', 'n3', listed(mem, 'n3'), 100 * MiB);
    expect(next.guessedUpTo('/n3')).toBe(INITIAL_WINDOW + 16 * MiB);
    next.drop('/n3');
    await new Promise((r) => setTimeout(r, 10));
    // Everything not taken went back to the budget; what was taken is its taker's to release.
    expect(budget.used).toBe(INITIAL_WINDOW);
  });

  it('is not extended once given up, nor for a name never guessed', async () => {
    const { mem, next } = await guessing();
    next.start('/n1', 'n1', listed(mem, 'n1'), 0);
    next.drop('/n1');
    next.reach('/n1', 50 * MiB);
    next.reach('/n2', 50 * MiB);
    expect(next.guessedUpTo('/n1')).toBeUndefined();
    expect(next.guessedUpTo('/n2')).toBeUndefined();
    expect(mem.calls.get('get')).toBeUndefined();
  });
});
