// Readahead for one open file.
//
// The kernel hands us reads of at most 128 KiB, one or two at a time; a GET per read would make a
// sequential read as slow as the round trip. So each open file keeps a run of contiguous chunks,
// fetched by parallel ranged GETs, ahead of where the reader is. The run starts small (1 MiB: a
// reader that only wants a file's header pays for little); after that, the distance fetched ahead
// of the reader is four times what it has read in sequence, up to the mount's window (read-window.ts). Growing with the
// bytes read rather than with chunks completed matters on a long link: the next chunks are asked
// for while the reader is still inside the current one, so a 10 MB file costs about two round
// trips instead of one per doubling. A read outside the run is a seek: the run is dropped and
// starts small again there, so random access costs one small GET per read.
//
// A process that reads whole files one after another (cp -r, tar, rsync) pays that ramp, and the
// open's round trip, on every file. When the mount has seen such reads (see Filesystem), open()
// asks for the bytes after the first window together with the first window itself (`requestAhead`)
// and the run starts at full width; the first seek drops back to the cautious behaviour. Those
// GETs start inside open(), so they see every write closed before it: close-to-open holds.
//
// Chunks take their memory from the shared budget without waiting. When the budget is spent, a
// read fetches just the bytes asked for, straight into the reply: slower, never out of memory.

import { isObjectError, type ObjectClient } from '../s3/object-client.ts';
import { ReadVersion } from '../s3/read-version.ts';
import { Chunk, notInRange, shorter } from './chunk.ts';
import type { MemoryBudget } from './memory-budget.ts';
import { ReadWindow } from './read-window.ts';

export { Chunk } from './chunk.ts';

/** Where the window starts: big enough for a header, small enough to waste little on a seek. */
export const INITIAL_WINDOW = 2 ** 20;
/** How far ahead to fetch, as a multiple of the bytes read in sequence so far. */
const GROWTH = 4;
/**
 * Chunk size cap. Every GET costs the server a request's work before its first byte: little on
 * s3rver or MinIO, a few tens of milliseconds of proxy time on Swift, where eight 8 MiB GETs
 * started together waited up to 300 ms for their first bytes. Two 32 MiB GETs instead of eight of
 * 8 MiB copied 10 × 100 MB 8% faster from both Swift and s3rver over the site-cloud link, and a
 * 1000 MB file as fast (docs/BENCHMARKING.md, "Readahead GET size").
 */
export const MAX_CHUNK = 32 * 2 ** 20;

/**
 * The size of the GETs that fetch `span` bytes ahead: half of it, so at least two travel in
 * parallel, but no less than the first window, no more than MAX_CHUNK, and no more than an eighth
 * of the memory budget, so that readahead (held to three quarters of it) still fits several GETs
 * under a small --memory-limit. The default 64 MiB window is two 32 MiB GETs; a larger
 * --readahead puts more of them in flight.
 */
export function pieceSize(span: number, budgetLimit: number): number {
  return Math.min(MAX_CHUNK, Math.max(INITIAL_WINDOW, Math.ceil(Math.min(span, budgetLimit / 4) / 2)));
}

/**
 * Chunks behind the reader are kept this long, because the kernel sends its own readahead as
 * several reads at once and they arrive in any order: with a 1 MiB `read_ahead_kb`, a 256 KiB
 * slack made one read in eight look like a seek and restart the window.
 */
const BEHIND_SLACK = 4 * 2 ** 20;

/**
 * How long a read outside readahead waits for room in the budget before it fetches its bytes
 * uncounted (see Prefetcher.fetchInto): long enough for readers that move on to free what it
 * needs (a read is at most 128 KiB), short enough that a read never stalls for long.
 */
const DIRECT_WAIT_MS = 500;

/**
 * Asks at once for up to `maxWindow` bytes after the first window of a `size`-byte object (or for
 * those of them from `from` on), in at least two pieces so they travel in parallel; memory comes
 * from the budget without waiting, and what the budget cannot hold is left to ordinary readahead.
 * Hand the chunks to a Prefetcher, or give them back with `dropChunks`.
 */
export function requestAhead(
  client: ObjectClient,
  key: string,
  size: number,
  budget: MemoryBudget,
  maxWindow: number,
  from = INITIAL_WINDOW,
  ifMatch?: string,
): Chunk[] {
  const chunks: Chunk[] = [];
  const version = new ReadVersion({ etag: ifMatch, size });
  const end = Math.min(size, INITIAL_WINDOW + maxWindow);
  const piece = pieceSize(end - from, budget.limit);
  for (let start = from; start < end; ) {
    const chunk = askFor(client, key, budget, start, Math.min(end, start + piece), version);
    if (!chunk) break;
    chunks.push(chunk);
    start = chunk.end;
  }
  return chunks;
}

/**
 * The share of the budget readahead (and the first bytes open() fetches) may hold: the rest stays
 * free for writers and for reads outside readahead, which are answered only when memory is there.
 */
export const READAHEAD_SHARE = 0.75;

/**
 * One ranged GET for readahead, or undefined when the budget has no room. Readahead stops at
 * READAHEAD_SHARE of the budget, so readers that hold chunks and then go idle can never starve
 * writers and reads outside readahead, which must wait for memory rather than skip it.
 */
export function askFor(
  client: ObjectClient,
  key: string,
  budget: MemoryBudget,
  start: number,
  end: number,
  version?: ReadVersion,
) {
  if (!budget.tryAcquire(end - start, budget.limit * READAHEAD_SHARE)) return undefined;
  return Chunk.fetch(client, key, start, end, version);
}

/**
 * Gives back chunks no read will ask anything more of (never handed to a reader, left behind, or
 * of a prefetcher that seeks or closes): their GETs stop, and the budget counts each until its
 * memory is really free (see Chunk.drop). Reads already waiting on them are still answered.
 */
export function dropChunks(chunks: readonly Chunk[], budget: MemoryBudget): void {
  for (const c of chunks) c.drop(() => budget.release(c.end - c.start));
}

export class Prefetcher {
  private readonly client: ObjectClient;
  private readonly key: string;
  private readonly size: number;
  private readonly budget: MemoryBudget;
  /** How far ahead to fetch at most: the mount's window, which reads that wait on latency grow. */
  private readonly win: ReadWindow;
  /**
   * Where the chunks asked for before the window reached full width end (while it ramped up, or
   * by open()): a read waiting on those is not the window's doing.
   */
  private rampEnd = 0;
  /** The last chunk checkPace judged: each GET counts once. */
  private paced: Chunk | undefined;
  /**
   * The version open() saw (its ETag, or its first answer's Last-Modified where the store sends
   * none, and its size): every GET asks for that version, never a newer one.
   */
  private readonly version: ReadVersion;
  private chunks: Chunk[] = [];
  /** Where the current sequential run began. */
  private runStart = 0;
  /** Full-width readahead from the start, for a reader expected to read the whole file. */
  private eager: boolean;
  /** Reads outside the run so far. */
  private seeks = 0;
  /** The furthest byte any read reached. */
  private reached = 0;
  /** Bytes handed out so far. */
  private delivered = 0;
  /** Where the last read began. */
  private position = 0;
  /** GETs issued, for tests that check readahead behaviour. */
  requests = 0;

  /**
   * `first` is the file's first bytes when open() already fetched them, their memory already
   * taken from the budget; they become the first chunk. `ahead` are chunks open() asked for with
   * `requestAhead` right after them; given, the reader is treated as one that reads it all.
   */
  constructor(
    client: ObjectClient,
    key: string,
    size: number,
    budget: MemoryBudget,
    /** A number is a window that never changes (see ReadWindow.fixed). */
    window: ReadWindow | number,
    first?: Buffer,
    ahead: readonly Chunk[] = [],
    etag?: string,
  ) {
    this.version = new ReadVersion({ etag, size });
    this.client = client;
    this.key = key;
    this.size = size;
    this.budget = budget;
    this.win = typeof window === 'number' ? ReadWindow.fixed(window) : window;
    if (first && first.length > 0) {
      this.chunks.push(Chunk.of(0, first));
      if (ahead[0]?.start === first.length) {
        this.chunks.push(...ahead);
        this.rampEnd = ahead.at(-1)?.end ?? 0;
      }
      else dropChunks(ahead, budget);
    } else {
      dropChunks(ahead, budget);
    }
    this.eager = this.chunks.length > 1;
  }

  /**
   * True while the reader has read (nearly: the kernel reorders a little) everything up to where
   * it is, and the file's last bytes have been asked for: it is about to finish.
   */
  get finishingInOrder(): boolean {
    return (
      this.seeks === 0 &&
      this.delivered >= this.reached * 0.9 &&
      (this.chunks.at(-1)?.end ?? 0) >= this.size
    );
  }

  /**
   * How far the readahead window reaches past the end of the file from where the reader is: what a
   * reader going on into the next file would already have asked for of it.
   */
  get pastEnd(): number {
    return Math.max(0, this.position + this.window(this.position) - this.size);
  }

  /** True once the file was read from its start to its end without a seek. */
  get readWhole(): boolean {
    return this.seeks === 0 && this.reached >= this.size;
  }

  /**
   * Bytes [offset, offset + length) of the file, fewer at its end. A read within one chunk is a
   * view of the bytes as they arrived; one across chunks is gathered into `into` when given (the
   * FUSE reply buffer), so that no read allocates memory of its own.
   */
  async read(offset: number, length: number, into?: Buffer): Promise<Buffer> {
    const end = Math.min(this.size, offset + length);
    if (offset >= end) return Buffer.alloc(0);
    const first = this.chunks[0];
    const last = this.chunks.at(-1);
    const inRun = first !== undefined && last !== undefined && offset >= first.from && offset <= last.end;
    // A read a little behind the run is one the kernel sent alongside later ones, not a seek: it
    // is answered by a GET of its own (below) and leaves the run as it is.
    const straggler = first !== undefined && offset < first.from && first.start - offset <= BEHIND_SLACK;
    if (!inRun && !straggler) {
      if (first !== undefined || offset !== 0) this.seeks++;
      this.eager = false;
      this.reset();
      this.runStart = offset;
    }
    this.reached = Math.max(this.reached, end);
    this.delivered += end - offset;
    this.position = offset;
    let fresh = 0;
    if (!straggler) {
      this.dropBehind(offset);
      fresh = this.extend(offset, end);
    }
    try {
      // The common case, a read inside one chunk, is answered without a copy.
      const home = straggler ? undefined : this.chunks.find((c) => c.from <= offset && end <= c.end);
      if (!straggler) this.checkPace(home ?? this.chunks.find((c) => c.end > offset), fresh);
      const got = home ? await home.slice(offset, end, into) : await this.gather(offset, end, straggler, into);
      // Never a short read inside the file: the kernel would take it for the file's end.
      if (got.length < end - offset) throw shorter(this.key, offset + got.length, end);
      return got;
    } catch (err) {
      this.reset();
      if (!isObjectError(err, 'changed')) throw err;
    }
    // Readahead handed over by a guess (next-file.ts) began before the open and may have met
    // another version than the one this reader opened: the bytes are asked for again, of the
    // reader's version. A reader whose version is gone fails as before, one GET later.
    const out = into && into.length >= end - offset ? into.subarray(0, end - offset) : Buffer.allocUnsafe(end - offset);
    await this.fetchInto(out, offset);
    return out;
  }

  /**
   * Tells the mount's window how the store kept pace, once per GET the reader enters, for GETs
   * asked for ahead of it by a window at full width (not by this read, not by open(), not while
   * the window still ramped up): missed when this one has delivered nothing yet while the one
   * before it is complete (latency a wider window would have hidden; a GET still streaming is the
   * link's pace), answered in time when it had delivered already.
   */
  private checkPace(needed: Chunk | undefined, fresh: number): void {
    if (!needed || needed === this.paced || needed.start < this.rampEnd) return;
    const i = this.chunks.indexOf(needed);
    if (i <= 0 || i >= this.chunks.length - fresh) return;
    if (needed.answered) {
      this.paced = needed;
      this.win.answeredInTime();
    } else if (this.chunks[i - 1]!.complete) {
      this.paced = needed;
      this.win.missed();
    }
  }

  /**
   * read(), answered at once when its bytes lie in one chunk of the run and have arrived (most reads
   * of a sequential reader), with the same bookkeeping; undefined, having changed nothing, otherwise.
   */
  readNow(offset: number, length: number, into?: Buffer): Buffer | undefined {
    const end = Math.min(this.size, offset + length);
    if (offset >= end) return undefined;
    const home = this.chunks.find((c) => c.from <= offset && end <= c.end);
    if (!home?.holds(offset, end)) return undefined;
    this.reached = Math.max(this.reached, end);
    this.delivered += end - offset;
    this.position = offset;
    this.dropBehind(offset);
    this.extend(offset, end);
    this.checkPace(home, 0);
    return home.sliceNow(offset, end, into);
  }

  /** A read across chunks, or partly outside them: copied together into one buffer. */
  private async gather(offset: number, end: number, straggler: boolean, into?: Buffer): Promise<Buffer> {
    const out = into && into.length >= end - offset ? into.subarray(0, end - offset) : Buffer.allocUnsafe(end - offset);
    let at = offset;
    for (const chunk of straggler ? [] : this.chunks) {
      if (chunk.end <= at || chunk.start >= end) continue;
      if (chunk.from > at) break;
      const upto = Math.min(end, chunk.end);
      const part = await chunk.slice(at, upto, out.subarray(at - offset));
      if (part.length < upto - at) throw shorter(this.key, at + part.length, upto);
      if (part.buffer !== out.buffer || part.byteOffset !== out.byteOffset + (at - offset)) part.copy(out, at - offset);
      at = upto;
      if (at >= end) break;
    }
    // A straggler, or the budget had no room for a chunk: fetch exactly what is missing.
    if (at < end) await this.fetchInto(out.subarray(at - offset), at);
    return out;
  }

  /**
   * Bytes from file offset `start` straight into `dest` (the reply), by a GET of their own. Their
   * memory is counted in the budget while the GET lasts: the read waits for room, as writers do,
   * but at most DIRECT_WAIT_MS, so that a budget held by idle writers and by the readahead of
   * readers that wait here themselves cannot stop every reader; then it goes ahead uncounted.
   */
  private async fetchInto(dest: Buffer, start: number): Promise<void> {
    this.requests++;
    const counted = await this.budget.acquire(dest.length, DIRECT_WAIT_MS);
    let got = 0;
    try {
      const range = { start, end: start + dest.length, ifMatch: this.version.etag, version: this.version };
      await this.client.getPieces(this.key, range, (piece) => {
        got += piece.copy(dest, got);
        this.client.releasePiece?.(piece);
      });
    } catch (err) {
      throw notInRange(err, this.key, start, start + dest.length);
    } finally {
      if (counted) this.budget.release(dest.length);
    }
    if (got < dest.length) throw shorter(this.key, start + got, start + dest.length);
  }

  /** Releases every chunk; call on close, once no read is running on this prefetcher. */
  close(): void {
    dropChunks(this.chunks, this.budget);
    this.chunks = [];
  }

  private reset(): void {
    dropChunks(this.chunks, this.budget);
    this.chunks = [];
  }

  /** Bytes to have fetched ahead of `offset`. */
  private window(offset: number): number {
    const most = Math.max(INITIAL_WINDOW, this.win.bytes);
    if (this.eager) return most;
    return Math.min(most, Math.max(INITIAL_WINDOW, GROWTH * (offset - this.runStart)));
  }

  private dropBehind(offset: number): void {
    while (this.chunks.length > 0 && this.chunks[0]!.end + BEHIND_SLACK <= offset) {
      dropChunks([this.chunks.shift()!], this.budget);
    }
    this.chunks[0]?.forget(offset - BEHIND_SLACK);
  }

  /** Adds chunks until they cover the read and the window ahead of it; returns how many. */
  private extend(offset: number, readEnd: number): number {
    const window = this.window(offset);
    const target = Math.min(this.size, Math.max(readEnd, offset + window));
    let start = this.chunks.at(-1)?.end ?? offset;
    const piece = pieceSize(window, this.budget.limit);
    const full = window >= Math.max(INITIAL_WINDOW, this.win.bytes);
    let added = 0;
    while (start < target) {
      const end = Math.min(this.size, start + piece);
      const chunk = askFor(this.client, this.key, this.budget, start, end, this.version);
      if (!chunk) break;
      this.requests++;
      this.chunks.push(chunk);
      if (!full) this.rampEnd = end;
      added++;
      start = end;
    }
    return added;
  }
}
