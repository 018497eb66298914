// A file written from start to end, sent to the bucket while it is being written.
//
// Bytes collect in a part buffer taken from the memory budget; when the buffer is full it goes
// out as one part of a multipart upload, started with the first full part (a file smaller than
// one part is a single PUT at close: one request instead of three). Parts upload in parallel up
// to `maxInFlight`; beyond that the writer waits, which is how a fast writer is slowed to the
// link's pace. Part sizes grow (part-sizes.ts), so any length up to S3's limit fits.
//
// A failed part fails the file: the next write and finish() throw, and the upload is aborted.
//
// Starting the multipart upload costs a round trip before the first part can leave (40–50 ms on
// Swift over the site-cloud link, while the link idles). Once this mount has written a file too
// big for one PUT, it expects the next one to be big too (`cp -r` of a directory of large files)
// and starts the upload at the first write, in parallel with filling the first part; a file that
// then stays small goes up in one PUT as always, and the unused upload is aborted.

import { type CompletedPart, isObjectError, type ObjectClient, type WriteOptions } from '../s3/object-client.ts';
import { copyObject } from './copy.ts';
import type { BufferPool } from './buffer-pool.ts';
import { leadingCopyRanges, partSize, SINGLE_PUT_LIMIT } from './part-sizes.ts';
import { inParallel } from './staging-file.ts';
import { abortUpload, type LateAborts } from './late-aborts.ts';

export interface UploadSettings {
  readonly client: ObjectClient;
  /** Where part buffers come from and go back to, and the memory budget they are drawn on. */
  readonly pool: BufferPool;
  /** Shared by the mount's uploads; see the file comment. */
  readonly streak: UploadStreak;
  readonly firstPartSize: number;
  readonly maxInFlight: number;
  /** How long a writer waits for memory before the caller should spill the file to disk. */
  readonly memoryWaitMs: number;
  /** Where an abort that failed is tried again (without it, once only). */
  readonly lateAborts?: LateAborts;
}

/** One part's bytes, in one buffer from the pool (see buffer-pool.ts for why not a fresh one). */
class PartBuffer {
  readonly buf: Buffer;
  length = 0;

  constructor(buf: Buffer) {
    this.buf = buf;
  }

  get full(): boolean {
    return this.length === this.buf.length;
  }

  /** Copies what fits of data[from..]; returns how many bytes it took. */
  append(data: Buffer, from: number): number {
    const n = data.copy(this.buf, this.length, from, Math.min(data.length, from + this.buf.length - this.length));
    this.length += n;
    return n;
  }

  bytes(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

/** What the files this mount writes have been like: big ones tend to come in a row. */
export class UploadStreak {
  /** The last file finished needed a multipart upload. */
  lastWasMultipart = false;
}

/** Thrown by write() when no memory came within memoryWaitMs and nothing was sent yet. */
export class MemoryPressure extends Error {}

/**
 * Keeps a copy of each part as it leaves (see WriteHandle's spool): bytes at `offset`. Must not
 * throw; a copy it cannot keep is its own business.
 */
export type KeepPart = (body: Buffer, offset: number) => Promise<void>;

export class StreamingUpload {
  private readonly s: UploadSettings;
  key: string;
  private buffer: PartBuffer | undefined;
  private partNumber = 1;
  private uploadId: Promise<string> | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly parts: CompletedPart[] = [];
  private failure: unknown;
  /** Metadata the multipart upload was started with; chmod or utimens may change it later. */
  private startedWith: WriteOptions | undefined;
  /** Bytes written so far; the next write must start here. */
  size = 0;
  /** Bytes handed to parts so far: the part being filled starts here. */
  private shipped = 0;
  private readonly keep: KeepPart | undefined;
  /** Ranges of the published object the upload starts with, and its ETag (see after()). */
  private leading: readonly { start: number; end: number }[] = [];
  private leadingEtag: string | undefined;
  /** Settles once the leading parts are copied (or failed). */
  private leadingDone: Promise<void> | undefined;

  constructor(settings: UploadSettings, key: string, keep?: KeepPart) {
    this.s = settings;
    this.key = key;
    this.keep = keep;
  }

  /**
   * A stream that goes on after the first `size` bytes of `key`, just published without a local
   * copy (write-handle.ts): its multipart upload starts with those bytes copied within the bucket
   * (UploadPartCopy), so appending needs neither a download nor the cache disk. Given `etag`, the
   * copy is of that version only: an object another client replaced meanwhile fails the upload
   * with `changed` instead of mixing its bytes with ours. Undefined when the object is too small
   * to be followed by more parts.
   */
  static after(
    settings: UploadSettings,
    key: string,
    size: number,
    etag: string | undefined,
    keep?: KeepPart,
  ): StreamingUpload | undefined {
    const leading = leadingCopyRanges(size, settings.firstPartSize);
    if (leading.length === 0) return undefined;
    const stream = new StreamingUpload(settings, key, keep);
    stream.leading = leading;
    stream.leadingEtag = etag === '' ? undefined : etag;
    stream.partNumber = leading.length + 1;
    stream.size = size;
    stream.shipped = size;
    return stream;
  }

  /** Where the bytes of bufferedBytes() start in the file. */
  get bufferedFrom(): number {
    return this.shipped;
  }

  /** Waits until every part sent so far has been uploaded (or failed) and kept. */
  async settle(): Promise<void> {
    await Promise.allSettled(this.inFlight);
  }

  /** True while every byte is still in the buffer, so the file can move to a staging file. */
  get unsent(): boolean {
    return this.partNumber === 1;
  }

  /** The bytes written and not yet handed to a part (all of them, when `unsent`). */
  bufferedBytes(): Buffer {
    return this.buffer ? this.buffer.bytes() : Buffer.alloc(0);
  }

  async write(data: Buffer, options: () => WriteOptions): Promise<void> {
    this.throwIfFailed();
    if (this.size === 0 && this.s.streak.lastWasMultipart) this.startMultipart(options);
    let at = 0;
    while (at < data.length) {
      if (!this.buffer) await this.takeBuffer();
      const n = this.buffer!.append(data, at);
      this.size += n;
      at += n;
      if (this.buffer!.full) await this.ship(options);
    }
  }

  /**
   * Sends what is left and completes the object. Returns its ETag. A file that fit in one part
   * keeps its bytes when the PUT fails, so the caller can try again; a multipart upload that fails
   * is aborted and its bytes are gone (the caller must report the loss).
   */
  async finish(options: WriteOptions): Promise<string> {
    if (this.unsent) {
      const r = await this.s.client.put(this.key, this.bufferedBytes(), options);
      this.s.streak.lastWasMultipart = false;
      void this.abort();
      return r.etag;
    }
    this.s.streak.lastWasMultipart = true;
    try {
      this.throwIfFailed();
      if ((this.buffer?.length ?? 0) > 0) await this.ship(() => options);
      void this.startMultipart(() => options);
      await Promise.all(this.inFlight);
      this.throwIfFailed();
      const id = await this.uploadId!;
      this.parts.sort((a, b) => a.partNumber - b.partNumber);
      const etag = (await this.s.client.completeMultipart(this.key, id, this.parts)).etag;
      if (sameWriteOptions(this.startedWith, options)) return etag;
      // Mode, owner or times changed after the first part left (chmod, or `cp -p` setting the
      // mtime before close): S3 replaces metadata only by copying the object onto itself.
      return await copyObject(this.s, this.key, this.key, this.size, options, this.s.maxInFlight);
    } catch (err) {
      await this.abort();
      throw err;
    } finally {
      this.dropBuffer();
    }
  }

  /** Gives up: releases memory and aborts a started multipart upload (best effort). */
  async abort(): Promise<void> {
    this.dropBuffer();
    await Promise.allSettled(this.inFlight);
    const id = this.uploadId;
    this.uploadId = undefined;
    // Handed over with its id still to come, when its CreateMultipartUpload is under way: the
    // abort is tracked (and named at unmount) from now on, not once the id arrives.
    if (id) await abortUpload(this.s, this.key, id.catch(() => undefined));
  }

  /** Gives the part being filled back to the pool. */
  private dropBuffer(): void {
    if (this.buffer) this.s.pool.give(this.buffer.buf);
    this.buffer = undefined;
  }

  private throwIfFailed(): void {
    if (this.failure !== undefined) throw this.failure;
  }

  private async takeBuffer(): Promise<void> {
    const size = partSize(this.partNumber, this.s.firstPartSize);
    // The first buffer holds a whole small file when the budget has room at once, so that file
    // goes up in one PUT; under memory pressure it stays a normal part.
    const pool = this.s.pool;
    const single = this.partNumber === 1 && size < SINGLE_PUT_LIMIT;
    const whole = single ? pool.tryTake(SINGLE_PUT_LIMIT, pool.budget.limit / 2) : undefined;
    const waitMs = this.unsent ? this.s.memoryWaitMs : Number.POSITIVE_INFINITY;
    const buf = whole ?? (await pool.take(size, waitMs));
    if (!buf) throw new MemoryPressure('memory budget exhausted');
    this.buffer = new PartBuffer(buf);
  }

  /** The multipart upload's id, starting the upload if it has not been started. */
  private startMultipart(options: () => WriteOptions): Promise<string> {
    if (this.uploadId === undefined) {
      this.startedWith = options();
      this.uploadId = this.s.client.createMultipart(this.key, this.startedWith);
      this.uploadId.catch(() => undefined);
      this.copyLeading(this.uploadId);
    }
    return this.uploadId;
  }

  /**
   * The leading parts, --upload-concurrency at a time, as one task in flight; the parts of the
   * new bytes go out after them (see ship), so the upload never has more requests at once.
   */
  private copyLeading(uploadId: Promise<string>): void {
    if (this.leading.length === 0) return;
    const ranges = this.leading.map((r, i) => ({ ...r, partNumber: i + 1 }));
    const task = uploadId
      .then((id) =>
        inParallel(ranges, this.s.maxInFlight, async (r) => {
          if (this.failure !== undefined) return;
          this.parts.push({ partNumber: r.partNumber, etag: await this.copyPart(id, r.partNumber, r) });
        }),
      )
      .catch((err: unknown) => {
        this.failure ??= err;
      })
      .finally(() => this.inFlight.delete(task));
    this.inFlight.add(task);
    this.leadingDone = task;
  }

  /**
   * One leading part, copied within the bucket; through this host where the server has no
   * UploadPartCopy (s3rver), with its bytes drawn on the memory budget.
   */
  private async copyPart(id: string, partNumber: number, bytes: { start: number; end: number }): Promise<string> {
    const client = this.s.client;
    const range = { ...bytes, ifMatch: this.leadingEtag };
    try {
      return await client.uploadPartCopy(this.key, id, partNumber, this.key, range);
    } catch (err) {
      // Gone since it was published: the append cannot go on from it. A `changed` is checked by
      // the GET below, whose If-Match holds where the copy's does not (Swift, objects in parts).
      if (isObjectError(err, 'not-found')) throw err;
      const n = range.end - range.start;
      await this.s.pool.budget.acquire(n);
      try {
        return await client.uploadPart(this.key, id, partNumber, await client.get(this.key, range));
      } finally {
        this.s.pool.budget.release(n);
      }
    }
  }

  private async ship(options: () => WriteOptions): Promise<void> {
    const part = this.buffer!;
    const body = part.bytes();
    this.buffer = undefined;
    const partNumber = this.partNumber++;
    const offset = this.shipped;
    this.shipped += body.length;
    const uploadId = this.startMultipart(options);
    const upload = Promise.all([uploadId, this.leadingDone])
      .then(([id]) => this.s.client.uploadPart(this.key, id, partNumber, body))
      .then((etag) => {
        this.parts.push({ partNumber, etag });
      })
      .catch((err: unknown) => {
        this.failure ??= err;
      });
    // The buffer goes back to the pool only once both the upload and the copy are done with it.
    const task = Promise.all([upload, this.keep?.(body, offset)])
      .then(() => undefined)
      .finally(() => {
        this.s.pool.give(part.buf);
        this.inFlight.delete(task);
      });
    this.inFlight.add(task);
    while (this.inFlight.size >= this.s.maxInFlight) await Promise.race(this.inFlight);
    this.throwIfFailed();
  }
}

function sameWriteOptions(a: WriteOptions | undefined, b: WriteOptions): boolean {
  if (a?.contentType !== b.contentType) return false;
  const am = a?.metadata ?? {};
  const bm = b.metadata ?? {};
  const keys = new Set([...Object.keys(am), ...Object.keys(bm)]);
  for (const k of keys) if (am[k] !== bm[k]) return false;
  return true;
}
