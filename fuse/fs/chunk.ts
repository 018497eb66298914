// One ranged GET of readahead, its bytes kept in the pieces they arrived in (see prefetcher.ts
// for how chunks make up a reader's window).

import { isObjectError, ObjectError, type ObjectClient } from '../s3/object-client.ts';
import type { ReadVersion } from '../s3/read-version.ts';

/**
 * What a GET no read wants any more may still bring before it is stopped: bodies up to this much
 * are read to their end and the connection kept, as undici does with a body nobody consumes; a
 * longer one is cut by closing its connection, which costs the next GET a new connection but
 * stops the transfer (and its memory) at once.
 */
const DRAIN_LIMIT = 128 * 1024;

/** The error of a read whose bytes end at `at`, before `end`, inside the size the file was opened with. */
export function shorter(key: string, at: number, end: number): ObjectError {
  return new ObjectError('changed', `${key} ends at byte ${at}, before ${end}: it is no longer the object that was opened`, key);
}

/**
 * A GET's error, where a range that starts inside the size the file was opened with but past the
 * object's end (416) says the object is shorter now, as a GET that ends short does.
 */
export function notInRange(err: unknown, key: string, start: number, end: number): unknown {
  return isObjectError(err, 'invalid-range') ? shorter(key, start, end) : err;
}

/**
 * One ranged GET of readahead. Its bytes are usable as they arrive: a read waits only for the
 * bytes it asks for, not for the whole chunk, so the reader keeps pace with the link and the
 * copying out to the kernel overlaps the transfer instead of following it. The bytes stay in the
 * pieces the socket delivered them in: gathering them into one buffer per chunk cost a copy of
 * every byte into fresh memory, the largest share of a download's CPU after garbage collection.
 * Pieces the reader has left behind are let go (`forget`), so that a chunk holds what is still
 * ahead of the reader rather than its whole 32 MiB until the reader leaves it.
 */
export class Chunk {
  readonly start: number;
  readonly end: number;
  /** The body's pieces in order, and where each begins, counted from `start`. */
  private readonly pieces: Buffer[] = [];
  private readonly offsets: number[] = [];
  private filled = 0;
  private done = false;
  /** Bytes at the chunk's start that were let go; reads must not ask for them. */
  private forgotten = 0;
  /** Pieces before this index were let go. */
  private kept = 0;
  /** Where each read still waiting in slice() begins, counted from `start`: forget keeps those bytes. */
  private readonly pending: number[] = [];
  private failure: { err: unknown } | undefined;
  /** Gives a piece let go back to the client whose GET filled it (ObjectClient.releasePiece). */
  private release: ((piece: Buffer) => void) | undefined;
  private waiters: { need: number; resolve: () => void; reject: (e: unknown) => void }[] = [];
  /** Set by drop(): called once the chunk holds no memory and its GET is over. */
  private dropped: (() => void) | undefined;
  private freed = false;
  /** Bytes a dropped chunk's GET brought and gave back at once. */
  private drained = 0;

  private constructor(start: number, end: number) {
    this.start = start;
    this.end = end;
  }

  /** A chunk already in memory. */
  static of(start: number, body: Buffer): Chunk {
    const c = new Chunk(start, start + body.length);
    c.add(body);
    c.finish();
    return c;
  }

  /** Starts the GET of bytes [start, end) of `key` (of `version`, when given). */
  static fetch(client: ObjectClient, key: string, start: number, end: number, version?: ReadVersion): Chunk {
    const c = new Chunk(start, end);
    c.release = client.releasePiece?.bind(client);
    client.getPieces(key, { start, end, ifMatch: version?.etag, version }, (piece) => c.add(piece)).then(
      () => {
        // The client asks again for bytes an answer left out unless the object ends before them:
        // a GET that ends short says the object is shorter than the size the file was opened with.
        if (c.filled + c.drained >= end - start) return c.finish();
        c.fail(shorter(key, start + c.filled, end));
      },
      (err: unknown) => c.fail(notInRange(err, key, start, end)),
    );
    return c;
  }

  /**
   * No read will ask this chunk for more: its pieces go back once no read waits in slice() any
   * more, its GET is stopped (see DRAIN_LIMIT), and `free` is called once both are done, so the
   * memory budget counts the chunk until its memory is really free.
   */
  drop(free: () => void): void {
    if (this.dropped) return;
    this.dropped = free;
    this.settle();
  }

  /** For a dropped chunk: lets its pieces go once no read waits, and frees it once its GET is over. */
  private settle(): void {
    if (!this.dropped || this.pending.length > 0) return;
    this.forget(this.end);
    if (this.freed || !(this.done || this.failure)) return;
    this.freed = true;
    this.dropped();
  }

  /** True once the GET delivered a byte, ended or failed: a read of it no longer waits on latency. */
  get answered(): boolean {
    return this.filled > 0 || this.done || this.failure !== undefined;
  }

  /** True once every byte of the GET arrived. */
  get complete(): boolean {
    return this.done || this.filled >= this.end - this.start;
  }

  /** The first byte a read may still ask this chunk for. */
  get from(): number {
    return this.start + this.forgotten;
  }

  /**
   * Bytes [from, to) of the file, once they have arrived (fewer when the object turned out
   * shorter): a view of one piece when they lie in one, else copied into `into` (or new memory).
   * Rejects with the GET's error.
   */
  async slice(from: number, to: number, into?: Buffer): Promise<Buffer> {
    if (from < this.from) throw new Error(`read at ${from} of bytes already let go (up to ${this.from})`);
    this.pending.push(from - this.start);
    try {
      await this.arrived(to - this.start);
      return this.view(from - this.start, Math.min(to - this.start, this.filled), into);
    } finally {
      this.pending.splice(this.pending.indexOf(from - this.start), 1);
      // The caller copies the view out before any socket can refill a piece given back here.
      this.settle();
    }
  }

  /** True when bytes [from, to) of the file can be read now: they arrived and were not let go. */
  holds(from: number, to: number): boolean {
    return from >= this.from && to <= this.end && !this.failure && (this.done || this.filled >= to - this.start);
  }

  /** slice() for bytes that holds() says are here: answered at once, without a promise. */
  sliceNow(from: number, to: number, into?: Buffer): Buffer {
    return this.view(from - this.start, Math.min(to - this.start, this.filled), into);
  }

  /**
   * Lets go of the whole pieces before file offset `offset`. Their memory may carry another GET's
   * bytes from then on: a view that slice() returned of them must have been used up by then (the
   * prefetcher forgets only what lies well behind its reader). Pieces a read still waiting in
   * slice() will be answered from are kept, whatever other reads of the file ask to let go.
   */
  forget(offset: number): void {
    const upto = Math.min(offset - this.start, ...this.pending);
    while (this.kept < this.pieces.length) {
      const next = this.offsets[this.kept]! + this.pieces[this.kept]!.length;
      if (next > upto || next > this.filled) break;
      this.release?.(this.pieces[this.kept]!);
      this.pieces[this.kept] = EMPTY;
      this.kept++;
      this.forgotten = next;
    }
  }

  private arrived(need: number): Promise<void> {
    if (this.failure) return Promise.reject(this.failure.err);
    if (this.done || this.filled >= need) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ need, resolve, reject }));
  }

  private view(from: number, to: number, into?: Buffer): Buffer {
    if (to <= from) return EMPTY;
    let i = this.indexOf(from);
    const first = this.pieces[i]!;
    const at = from - this.offsets[i]!;
    if (to - this.offsets[i]! <= first.length) return first.subarray(at, to - this.offsets[i]!);
    const out = into && into.length >= to - from ? into.subarray(0, to - from) : Buffer.allocUnsafe(to - from);
    let written = first.copy(out, 0, at);
    while (written < out.length) written += this.pieces[++i]!.copy(out, written, 0, out.length - written);
    return out;
  }

  /** The index of the piece holding byte `rel` (relative to start): a binary search. */
  private indexOf(rel: number): number {
    let lo = this.kept;
    let hi = this.pieces.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.offsets[mid]! <= rel) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  private add(piece: Buffer): void {
    if (this.dropped && this.pending.length === 0) {
      this.release?.(piece);
      this.drained += piece.length;
      if (this.end - this.start - this.filled - this.drained <= DRAIN_LIMIT) return;
      // Thrown into the data path's socket reader, which closes the connection.
      throw new ObjectError('other', 'readahead no longer wanted: GET stopped');
    }
    if (piece.length === 0) return;
    this.pieces.push(piece);
    this.offsets.push(this.filled);
    this.filled += piece.length;
    this.wake();
  }

  private finish(): void {
    this.done = true;
    this.wake();
    this.settle();
  }

  private wake(): void {
    if (this.waiters.length === 0) return;
    const still: typeof this.waiters = [];
    for (const w of this.waiters) {
      if (this.done || w.need <= this.filled) w.resolve();
      else still.push(w);
    }
    this.waiters = still;
  }

  private fail(err: unknown): void {
    this.failure = { err };
    for (const w of this.waiters) w.reject(err);
    this.waiters = [];
    this.settle();
  }
}

const EMPTY = Buffer.alloc(0);
