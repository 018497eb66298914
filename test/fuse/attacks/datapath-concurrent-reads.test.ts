// Two reads of one open file at once (two threads pread-ing one descriptor, as parallel readers
// of a big file do): one waits for bytes of a readahead GET that is still arriving while the other
// reads a few MiB further on. The second read lets go of the pieces behind it (Chunk.forget), and
// those include the pieces the first read is waiting to be answered from.
//
// Expected (docs/SEMANTICS.md: a reader sees the object's bytes, the mount never returns wrong
// bytes): every read returns exactly the file's bytes at its offset, whatever other reads of the
// same descriptor do meanwhile.

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryBudget } from '../../../fuse/fs/memory-budget.ts';
import { Prefetcher } from '../../../fuse/fs/prefetcher.ts';
import type { ByteRange, ObjectClient, OnPiece } from '../../../fuse/s3/object-client.ts';
import { SlabPool } from '../../../fuse/s3/slab-pool.ts';

const MiB = 2 ** 20;
const KiB = 1024;
const SIZE = 64 * MiB;

/** The file's bytes: each 4-byte word is its own offset, so a wrong byte shows where it came from. */
function content(size: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i + 4 <= size; i += 4) b.writeUInt32LE(i, i);
  return b;
}

/**
 * A store whose GETs arrive in 64 KiB socket reads copied into pooled slabs, as the data path's do;
 * the GET that starts at `stallAt` stops after `stallAfter` bytes until `resume()`.
 */
function stallingClient(body: Buffer, stallAt: number, stallAfter: number) {
  const slabs = new SlabPool();
  let resume!: () => void;
  const gate = new Promise<void>((r) => (resume = r));
  const client = {
    async get(_key: string, range?: ByteRange) {
      return Buffer.from(body.subarray(range?.start ?? 0, range?.end ?? body.length));
    },
    async getPieces(_key: string, range: ByteRange, onPiece: OnPiece) {
      const cutter = slabs.cutter();
      const end = Math.min(range.end, body.length);
      try {
        for (let at = range.start; at < end; at += 64 * KiB) {
          if (range.start === stallAt && at - range.start === stallAfter) await gate;
          await new Promise((r) => setImmediate(r));
          const view = Buffer.from(body.subarray(at, Math.min(end, at + 64 * KiB)));
          onPiece(cutter.cut(view, end - at));
        }
      } finally {
        cutter.done();
      }
      return end - range.start;
    },
    releasePiece: (piece: Buffer) => slabs.release(piece),
  } as unknown as ObjectClient;
  return { client, resume };
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('datapath attack: concurrent reads of one descriptor', () => {
  it('a read waiting on a GET still arriving gets the file bytes while another read runs ahead', async () => {
    const body = content(SIZE);
    // The readahead GET of [2 MiB, 3 MiB) stalls half way.
    const { client, resume } = stallingClient(body, 2 * MiB, 512 * KiB);
    const p = new Prefetcher(client, 'k', SIZE, new MemoryBudget(1024 * MiB), 64 * MiB);
    // A sequential start: the window grows past 2 MiB.
    for (const off of [0, 512 * KiB, 1 * MiB, 2 * MiB]) {
      const got = await p.read(off, 128 * KiB);
      expect(sha(got)).toBe(sha(body.subarray(off, off + 128 * KiB)));
    }
    // Thread A: a read across the point where the GET stalled.
    const aOff = 2 * MiB + 512 * KiB - 64 * KiB;
    const a = p.read(aOff, 128 * KiB);
    await new Promise((r) => setTimeout(r, 20));
    // Thread B: a read further on, inside the readahead already asked for.
    const bOff = 6 * MiB + 768 * KiB;
    const b = await p.read(bOff, 128 * KiB);
    expect(sha(b)).toBe(sha(body.subarray(bOff, bOff + 128 * KiB)));
    resume();
    const got = await a;
    expect(got.length).toBe(128 * KiB);
    expect(got.equals(body.subarray(aOff, aOff + 128 * KiB))).toBe(true);
    p.close();
  });
});
