// Readahead keeps each GET's bytes in the pieces the network delivered: no copy into a chunk-sized
// buffer, reads across pieces gathered straight into the FUSE reply buffer, and the pieces the
// reader has left behind let go of while the rest of the chunk is still in use.

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryBudget } from '../../../fuse/fs/memory-budget.ts';
import { Chunk, Prefetcher } from '../../../fuse/fs/prefetcher.ts';
import { MemoryObjectClient } from '../../../fuse/s3/memory-client.ts';
import type { ByteRange, ObjectClient, OnPiece } from '../../../fuse/s3/object-client.ts';
import { MiB } from './make-fs.ts';

const KiB = 1024;

/** `size` random bytes as `key`, read through a client that delivers GETs in 64 KiB pieces, as a socket does. */
async function inPieces(key: string, size: number): Promise<{ data: Buffer; client: ObjectClient }> {
  const mem = new MemoryObjectClient();
  const data = randomBytes(size);
  await mem.put(key, data);
  const client = Object.create(mem) as ObjectClient;
  client.getPieces = async (k: string, range: ByteRange, onPiece: OnPiece) => {
    const body = await mem.get(k, range);
    for (let at = 0; at < body.length; at += 64 * KiB) {
      onPiece(body.subarray(at, at + 64 * KiB));
      await Promise.resolve();
    }
    return body.length;
  };
  return { data, client };
}

describe('readahead in pieces', () => {
  it('gathers a read that spans pieces into the buffer it is given, and returns a view of it', async () => {
    const { data, client } = await inPieces('f', 8 * MiB);
    const p = new Prefetcher(client, 'f', data.length, new MemoryBudget(64 * MiB), 4 * MiB);
    for (let at = 0; at < data.length; at += 128 * KiB) {
      // 96 KiB in: every read crosses a 64 KiB piece boundary.
      const offset = at + 96 * KiB;
      const into = Buffer.alloc(128 * KiB);
      const got = await p.read(offset, 128 * KiB, into);
      expect(got.equals(data.subarray(offset, offset + 128 * KiB))).toBe(true);
      if (got.length === 128 * KiB) expect(got.buffer === into.buffer && got.byteOffset === into.byteOffset).toBe(true);
    }
    p.close();
  });

  it('answers a read inside one piece with a view of that piece, copying nothing', async () => {
    const { data, client } = await inPieces('f', 2 * MiB);
    const p = new Prefetcher(client, 'f', data.length, new MemoryBudget(64 * MiB), 4 * MiB);
    const into = Buffer.alloc(32 * KiB);
    const got = await p.read(0, 32 * KiB, into);
    expect(got.equals(data.subarray(0, 32 * KiB))).toBe(true);
    expect(got.buffer).not.toBe(into.buffer);
    p.close();
  });

  it('lets go of the pieces a reader has passed, and refuses to read them', async () => {
    const { data, client } = await inPieces('f', 16 * MiB);
    const chunk = Chunk.fetch(client, 'f', 0, 16 * MiB);
    expect((await chunk.slice(0, 8 * MiB)).equals(data.subarray(0, 8 * MiB))).toBe(true);
    chunk.forget(6 * MiB + 100);
    // Whole pieces only: the one holding byte 6 MiB + 100 is kept.
    expect(chunk.from).toBe(6 * MiB);
    await expect(chunk.slice(5 * MiB, 5 * MiB + 10)).rejects.toThrow(/already let go/);
    expect((await chunk.slice(6 * MiB, 6 * MiB + 200 * KiB)).equals(data.subarray(6 * MiB, 6 * MiB + 200 * KiB))).toBe(true);
    // Not past what has arrived.
    chunk.forget(16 * MiB);
    expect(chunk.from).toBeLessThanOrEqual(16 * MiB);
    expect((await chunk.slice(16 * MiB - 10, 16 * MiB)).equals(data.subarray(16 * MiB - 10))).toBe(true);
  });

  it('still answers a read far behind the reader, inside a chunk it has partly let go of', async () => {
    const { data, client } = await inPieces('f', 40 * MiB);
    const p = new Prefetcher(client, 'f', data.length, new MemoryBudget(256 * MiB), 64 * MiB);
    for (let at = 0; at < 20 * MiB; at += 128 * KiB) await p.read(at, 128 * KiB, Buffer.alloc(128 * KiB));
    const back = await p.read(2 * MiB, 128 * KiB);
    expect(back.equals(data.subarray(2 * MiB, 2 * MiB + 128 * KiB))).toBe(true);
    // And the sequential run goes on where it was.
    const on = await p.read(20 * MiB, 128 * KiB);
    expect(on.equals(data.subarray(20 * MiB, 20 * MiB + 128 * KiB))).toBe(true);
    p.close();
  });

  it('gives every piece back to the client once read past or closed, never one a read still needs', async () => {
    const { data, client } = await inPieces('f', 24 * MiB);
    const given = new Set<Buffer>();
    const back: Buffer[] = [];
    const getPieces = client.getPieces.bind(client);
    client.getPieces = (k, range, onPiece) => getPieces(k, range, (piece) => (given.add(piece), onPiece(piece)));
    // A piece given back may carry another GET's bytes at once: poison it, as reuse would.
    client.releasePiece = (piece) => {
      back.push(piece);
      piece.fill(0xee);
    };
    const p = new Prefetcher(client, 'f', data.length, new MemoryBudget(256 * MiB), 8 * MiB);
    for (let at = 0; at < 16 * MiB; at += 128 * KiB) {
      const got = await p.read(at, 128 * KiB, Buffer.alloc(128 * KiB));
      expect(got.equals(data.subarray(at, at + 128 * KiB))).toBe(true);
    }
    expect(back.length).toBeGreaterThan(0);
    p.close();
    // Give the GETs still running time to end; what arrives after close is left to the GC.
    await new Promise((r) => setTimeout(r, 50));
    expect(new Set(back).size).toBe(back.length);
    expect(back.every((piece) => given.has(piece))).toBe(true);
    expect(back.length).toBeGreaterThanOrEqual((16 * MiB) / (64 * KiB));
  });

  it('answers at once, without a promise, the reads whose bytes have arrived, and only those', async () => {
    const { data, client } = await inPieces('f', 8 * MiB);
    const p = new Prefetcher(client, 'f', data.length, new MemoryBudget(64 * MiB), 4 * MiB);
    // Nothing asked for yet: the first read must go through read().
    expect(p.readNow(0, 128 * KiB)).toBeUndefined();
    expect((await p.read(0, 128 * KiB)).equals(data.subarray(0, 128 * KiB))).toBe(true);
    let now = 0;
    for (let at = 128 * KiB; at < data.length; at += 128 * KiB) {
      const into = Buffer.alloc(128 * KiB);
      const quick = p.readNow(at, 128 * KiB, into);
      if (quick) now++;
      // Give the store a turn, as the kernel's next request would.
      else await new Promise((r) => setImmediate(r));
      const got = quick ?? (await p.read(at, 128 * KiB, into));
      expect(got.equals(data.subarray(at, at + 128 * KiB))).toBe(true);
    }
    // Readahead kept ahead of the reader: most reads found their bytes there already.
    expect(now).toBeGreaterThan(32);
    // A read of bytes let go long ago is a seek: read() starts a new run there.
    expect(p.readNow(0, 10)).toBeUndefined();
    p.close();
  });
});

describe('readahead no read wants any more', () => {
  /** A client whose GETs deliver one 64 KiB piece per call of `next()`, and say how they ended. */
  async function stepped(size: number) {
    const mem = new MemoryObjectClient();
    const data = randomBytes(size);
    await mem.put('f', data);
    const steps: (() => void)[] = [];
    const ended: string[] = [];
    const client = Object.create(mem) as ObjectClient;
    client.getPieces = async (k: string, range: ByteRange, onPiece: OnPiece) => {
      const body = await mem.get(k, range);
      try {
        for (let at = 0; at < body.length; at += 64 * KiB) {
          await new Promise<void>((r) => steps.push(r));
          onPiece(body.subarray(at, at + 64 * KiB));
        }
      } catch (err) {
        ended.push('stopped');
        throw err;
      }
      ended.push('whole');
      return body.length;
    };
    const next = async () => {
      for (let i = 0; i < 20 && steps.length === 0; i++) await new Promise((r) => setImmediate(r));
      steps.shift()?.();
      await new Promise((r) => setImmediate(r));
    };
    return { data, client, next, ended };
  }

  it('stops the GET of a dropped chunk and counts its memory until the GET has ended', async () => {
    const { client, next, ended } = await stepped(4 * MiB);
    const budget = new MemoryBudget(64 * MiB);
    expect(budget.tryAcquire(4 * MiB)).toBe(true);
    const chunk = Chunk.fetch(client, 'f', 0, 4 * MiB);
    await next();
    chunk.drop(() => budget.release(4 * MiB));
    expect(budget.used).toBe(4 * MiB);
    await next();
    expect(ended).toEqual(['stopped']);
    await new Promise((r) => setImmediate(r));
    expect(budget.used).toBe(0);
  });

  it('still answers a read that waits on a dropped chunk, and stops the GET after it', async () => {
    const { data, client, next, ended } = await stepped(1 * MiB);
    const chunk = Chunk.fetch(client, 'f', 0, 1 * MiB);
    const waiting = chunk.slice(0, 128 * KiB);
    let freed = false;
    chunk.drop(() => (freed = true));
    await next();
    await next();
    expect((await waiting).equals(data.subarray(0, 128 * KiB))).toBe(true);
    await next();
    expect(ended).toEqual(['stopped']);
    await new Promise((r) => setImmediate(r));
    expect(freed).toBe(true);
  });

  it('fails a read of a GET that ended before the size the file was opened with', async () => {
    const mem = new MemoryObjectClient();
    await mem.put('f', randomBytes(1 * MiB));
    // Opened as 2 MiB: the store's object is shorter now.
    const p = new Prefetcher(mem, 'f', 2 * MiB, new MemoryBudget(64 * MiB), 4 * MiB);
    const into = Buffer.alloc(128 * KiB, 0xee);
    await expect(p.read(1 * MiB - 64 * KiB, 128 * KiB, into)).rejects.toMatchObject({ kind: 'changed' });
    await expect(p.read(1.5 * MiB, 128 * KiB)).rejects.toMatchObject({ kind: 'changed' });
  });
});
