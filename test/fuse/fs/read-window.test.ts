// The readahead window grows only when a reader waits on a GET that was asked for ahead of it and
// has not answered yet (latency a wider window would have hidden), never for a reader slower than
// the store: see fuse/fs/read-window.ts.

import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { MemoryBudget } from '../../../fuse/fs/memory-budget.ts';
import { Prefetcher } from '../../../fuse/fs/prefetcher.ts';
import { ReadWindow } from '../../../fuse/fs/read-window.ts';
import { MemoryObjectClient } from '../../../fuse/s3/memory-client.ts';
import type { ByteRange, ObjectClient, OnPiece } from '../../../fuse/s3/object-client.ts';
import { MiB } from './make-fs.ts';

const KiB = 1024;

/** A store whose every GET waits `firstByteMs` before its first byte, then sends 1 MiB pieces. */
async function store(size: number, firstByteMs: number): Promise<{ data: Buffer; client: ObjectClient }> {
  const mem = new MemoryObjectClient();
  const data = randomBytes(size);
  await mem.put('f', data);
  const client = Object.create(mem) as ObjectClient;
  client.getPieces = async (k: string, range: ByteRange, onPiece: OnPiece) => {
    await sleep(firstByteMs);
    const body = await mem.get(k, range);
    for (let at = 0; at < body.length; at += MiB) {
      onPiece(body.subarray(at, at + MiB));
      await sleep(0);
    }
    return body.length;
  };
  return { data, client };
}

/** Reads the whole file in 128 KiB reads, pausing `pauseMs` after every MiB. */
async function readAll(p: Prefetcher, data: Buffer, pauseMs: number): Promise<void> {
  for (let at = 0; at < data.length; at += 128 * KiB) {
    const got = await p.read(at, 128 * KiB);
    expect(got.equals(data.subarray(at, at + 128 * KiB))).toBe(true);
    if (pauseMs > 0 && at % MiB === 0) await sleep(pauseMs);
  }
  p.close();
}

describe('readahead window', () => {
  it('grows, up to its maximum, for a reader that keeps finding the next GET silent, and shrinks back', async () => {
    const { data, client } = await store(96 * MiB, 40);
    const window = new ReadWindow(16 * MiB, 4 * MiB);
    await readAll(new Prefetcher(client, 'f', data.length, new MemoryBudget(256 * MiB), window), data, 0);
    expect(window.bytes).toBe(16 * MiB);
    // A store that answers in time again brings it back to where it started.
    const quick = await store(96 * MiB, 0);
    await readAll(new Prefetcher(quick.client, 'f', quick.data.length, new MemoryBudget(256 * MiB), window), quick.data, 5);
    expect(window.bytes).toBe(4 * MiB);
  });

  it('stays where it started for a reader slower than the store, and when never growable', async () => {
    const { data, client } = await store(24 * MiB, 5);
    const window = new ReadWindow(64 * MiB, 4 * MiB);
    await readAll(new Prefetcher(client, 'f', data.length, new MemoryBudget(256 * MiB), window), data, 15);
    expect(window.bytes).toBe(4 * MiB);
    const fixed = ReadWindow.fixed(4 * MiB);
    const slow = await store(24 * MiB, 40);
    await readAll(new Prefetcher(slow.client, 'f', slow.data.length, new MemoryBudget(256 * MiB), fixed), slow.data, 0);
    expect(fixed.bytes).toBe(4 * MiB);
  });
});
