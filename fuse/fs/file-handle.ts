// What an open file is while it is open. A read-only handle reads through its own prefetcher. A
// writable handle starts as a stream (new files, O_TRUNC, truncate to 0), which uploads as it is
// written; the first write that a stream cannot carry — out of order, a read of bytes already
// sent, a truncate to a non-zero size, memory pressure, a rename — moves it to a staging file on
// local disk (the spool's copy, once parts have left: spool.ts). Nothing reaches the bucket before
// flush() (close or fsync), which returns only once the bucket holds every byte, or throws.

import type { FileHandle } from 'node:fs/promises';
import type { ObjectClient, WriteOptions } from '../s3/object-client.ts';
import type { Journal } from './journal.ts';
import type { MemoryBudget } from './memory-budget.ts';
import { FsError } from './errno.ts';
import { type Attr, writeOptionsOf } from './metadata.ts';
import { type Chunk, Prefetcher } from './prefetcher.ts';
import { Spool } from './spool.ts';
import { StagingFile, type StagingSettings } from './staging-file.ts';
import { MemoryPressure, StreamingUpload, type UploadSettings } from './streaming-upload.ts';

export interface HandleSettings {
  readonly client: ObjectClient;
  readonly budget: MemoryBudget;
  readonly upload: UploadSettings;
  readonly staging: StagingSettings;
  readonly maxReadahead: number;
  /** Set with --write-back: flush() hands files to the journal instead of uploading them. */
  readonly journal?: Journal;
}

export class ReadHandle {
  readonly kind = 'read';
  path: string;
  size: number;
  private readonly s: HandleSettings;
  private readonly key: string;
  private prefetcher: Prefetcher;
  /** Set by reload() when the new content waits in the write-back journal. */
  private local: LocalReadHandle | undefined;
  /** Set when the object was about to be deleted or replaced while this handle was open. */
  private copy: Promise<StagingFile> | undefined;

  constructor(
    s: HandleSettings,
    path: string,
    key: string,
    size: number,
    first?: Buffer,
    ahead?: readonly Chunk[],
  ) {
    this.s = s;
    this.path = path;
    this.key = key;
    this.size = size;
    this.prefetcher = new Prefetcher(s.client, key, size, s.budget, s.maxReadahead, first, ahead);
  }

  /** Reads under way on the current prefetcher, and what to close once they are done. */
  private reading = 0;
  private retired: Prefetcher[] = [];

  async read(offset: number, length: number, into?: Buffer): Promise<Buffer> {
    if (this.copy) return (await this.copy).read(offset, length);
    if (this.local) return this.local.read(offset, length);
    this.reading++;
    try {
      return await this.prefetcher.read(offset, length, into);
    } finally {
      if (--this.reading === 0) for (const p of this.retired.splice(0)) p.close();
    }
  }

  /**
   * This mount has just replaced the file's content (a writer's close, a truncate): read the new
   * one from now on, from the bucket (`size` bytes) or from the journal's file, as a reader of a
   * local file sees every change. What was fetched ahead of the old content is dropped.
   */
  async reload(size: number, local?: LocalReadHandle): Promise<void> {
    // A read still running on the old prefetcher finishes first (see read()).
    if (this.reading > 0) this.retired.push(this.prefetcher);
    else this.prefetcher.close();
    await this.local?.close();
    this.local = local;
    this.size = size;
    this.prefetcher = new Prefetcher(this.s.client, this.key, size, this.s.budget, this.s.maxReadahead);
  }

  /**
   * The object is about to be deleted (unlink) or replaced (rename over it) while this handle is
   * open: as on a local filesystem, the handle keeps reading what it opened, from a local copy
   * made now. Throws EFBIG above --staging-limit; the handle then fails once the object is gone.
   */
  async keepCopy(): Promise<void> {
    this.copy ??= StagingFile.fromObject(this.s.staging, this.key, this.size);
    await this.copy.catch((err: unknown) => {
      this.copy = undefined;
      throw err;
    });
  }

  /** The filesystem has guessed which file this reader opens next (see next-file.ts). */
  guessedNext = false;
  /** That file, when there was one to guess. */
  next: string | undefined;

  /** How far the readahead window reaches past the end of this file. */
  get windowPastEnd(): number {
    return this.prefetcher.pastEnd;
  }

  /** Reading in order, with the last bytes asked for: the link will soon have room. */
  get finishingInOrder(): boolean {
    return this.prefetcher.finishingInOrder;
  }

  /** Read from start to end without a seek, as cp, tar and rsync do. */
  get readWhole(): boolean {
    return this.prefetcher.readWhole;
  }

  async close(): Promise<void> {
    this.prefetcher.close();
    await this.local?.close();
    await (await this.copy?.catch(() => undefined))?.close();
  }
}

/** Reads a file whose newest content is still in the write-back journal, not yet in the bucket. */
export class LocalReadHandle {
  readonly kind = 'read';
  path: string;
  private readonly fh: FileHandle;

  private constructor(path: string, fh: FileHandle) {
    this.path = path;
    this.fh = fh;
  }

  /** `fh` is open on the journal's data file: the descriptor keeps it readable after its upload. */
  static of(path: string, fh: FileHandle): LocalReadHandle {
    return new LocalReadHandle(path, fh);
  }

  /** Reads under way: a handle replaced while one runs (see refreshReaders) closes after it. */
  private reading = 0;
  private closing = false;

  async read(offset: number, length: number): Promise<Buffer> {
    this.reading++;
    try {
      const buf = Buffer.allocUnsafe(length);
      const { bytesRead } = await this.fh.read(buf, 0, length, offset);
      return buf.subarray(0, bytesRead);
    } finally {
      if (--this.reading === 0 && this.closing) await this.fh.close();
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.reading === 0) await this.fh.close();
  }
}

export class WriteHandle {
  readonly kind = 'write';
  private readonly s: HandleSettings;
  path: string;
  key: string;
  /** The attributes the object will carry when uploaded. */
  attr: Attr;
  /** Size of the object in the bucket this handle started from (0 for a new or truncated file). */
  private base: number;
  private stream: StreamingUpload | undefined;
  /** The local copy of what `stream` has sent (see spool.ts). */
  private spool: Spool | undefined;
  private staging: StagingFile | undefined;
  dirty: boolean;
  /** Set when bytes were lost in a failed upload: every later write and flush fails. */
  private broken: unknown;
  /** Set by unlink: the data is dropped at flush instead of recreating the file. */
  unlinked = false;
  private queue: Promise<unknown> = Promise.resolve();

  /** Set by close(): nothing is read or written through this handle any more. */
  closed = false;

  constructor(
    s: HandleSettings,
    path: string,
    key: string,
    attr: Attr,
    existingSize: number | undefined,
  ) {
    this.s = s;
    this.path = path;
    this.key = key;
    this.attr = attr;
    this.base = existingSize ?? 0;
    this.dirty = existingSize === undefined;
    if (existingSize === undefined && !s.journal) this.stream = this.newStream();
  }

  private newStream(): StreamingUpload {
    this.spool = new Spool(this.s.staging, this.key);
    return new StreamingUpload(this.s.upload, this.key, this.spool.keep);
  }

  get size(): number {
    return this.stream?.size ?? this.staging?.size ?? this.base;
  }

  /** Operations on one handle run one at a time, in the order the kernel sent them. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Set when utimens gave the file an mtime. Until then the upload carries no mtime and the
   * object's Last-Modified (when the upload completed, just after the last write) stands for it.
   * Writes move the mtime, so a stored one would go stale while a multipart upload is under way,
   * and putting it right at close would copy the whole object onto itself.
   */
  mtimeSet = false;

  private options = (): WriteOptions => writeOptionsOf(this.attr, this.mtimeSet);

  write(data: Buffer, offset: number): Promise<void> {
    return this.serial(async () => {
      if (this.broken !== undefined) throw this.broken;
      if (!this.stream && !this.staging && offset === 0 && this.base === 0 && !this.s.journal) {
        this.stream = this.newStream();
      }
      if (this.stream && offset === this.stream.size) {
        try {
          await this.stream.write(data, this.options);
        } catch (err) {
          if (!(err instanceof MemoryPressure)) throw err;
          await this.toStaging();
          await this.staging!.write(data, offset);
        }
      } else {
        await this.toStaging();
        await this.staging!.write(data, offset);
      }
      this.dirty = true;
      const now = Date.now();
      this.attr = { ...this.attr, mtimeMs: now, ctimeMs: now, size: this.size };
    });
  }

  read(offset: number, length: number): Promise<Buffer> {
    return this.serial(async () => {
      if (this.stream?.unsent) {
        const buf = this.stream.bufferedBytes();
        return Buffer.from(buf.subarray(Math.min(offset, buf.length), Math.min(offset + length, buf.length)));
      }
      if (this.stream || this.s.staging.hasLocal?.(this.key)) await this.toStaging();
      if (this.staging) return this.staging.read(offset, length);
      const end = Math.min(this.base, offset + length);
      if (offset >= end) return Buffer.alloc(0);
      return this.s.client.get(this.key, { start: offset, end });
    });
  }

  /**
   * Makes the handle keep its content on local disk from now on, so another opener can read it
   * (see Filesystem.openShared). False when it cannot: closed, or parts already sent.
   */
  keepLocal(): Promise<boolean> {
    return this.serial(async () => {
      if (this.closed || (this.stream && !this.stream.unsent)) return false;
      await this.toStaging();
      return true;
    });
  }

  /**
   * The file was renamed while open with unsaved changes: they go to the new key at close, and
   * nothing is published now. A stream's multipart upload belongs to the old key, so the content
   * moves to a staging file first (from the spool when parts have left).
   */
  moveTo(path: string, key: string): Promise<void> {
    return this.serial(async () => {
      if (this.stream) await this.toStaging();
      this.path = path;
      this.key = key;
    });
  }

  /** Bytes of the content as this handle has it, or undefined once it no longer holds them. */
  readLocal(offset: number, length: number): Promise<Buffer | undefined> {
    return this.serial(async () => {
      if (this.closed) return undefined;
      if (this.staging) return this.staging.read(offset, length);
      if (this.stream?.unsent) {
        const buf = this.stream.bufferedBytes();
        return Buffer.from(buf.subarray(Math.min(offset, buf.length), Math.min(offset + length, buf.length)));
      }
      return undefined;
    });
  }

  truncate(size: number): Promise<void> {
    return this.serial(async () => {
      if (size === this.size) return;
      if (size === 0) {
        await this.discard();
        this.base = 0;
        if (this.s.journal) this.staging = await StagingFile.create(this.s.staging);
        else this.stream = this.newStream();
      } else {
        if (size > this.s.staging.limit) {
          throw new FsError('EFBIG', `${this.key}: ${size} bytes is over the staging limit of ${this.s.staging.limit}`);
        }
        await this.toStaging();
        await this.staging!.truncate(size);
      }
      this.dirty = true;
      const now = Date.now();
      this.attr = { ...this.attr, mtimeMs: now, ctimeMs: now, size: this.size };
    });
  }

  /** Uploads pending changes. Returns the new ETag, or undefined when there was nothing to do. */
  flush(): Promise<string | undefined> {
    return this.serial(async () => {
      if (!this.dirty) return undefined;
      if (this.unlinked) {
        await this.discard();
        this.dirty = false;
        return undefined;
      }
      if (this.broken !== undefined) throw this.broken;
      let etag: string;
      if (this.s.journal) {
        // Write-back: durable on local disk is enough; the journal uploads it later.
        const file = this.staging ?? (await StagingFile.create(this.s.staging));
        this.staging = undefined;
        this.base = file.size;
        await this.s.journal.add(this.key, file, this.options());
        etag = '';
      } else if (this.staging) {
        etag = await this.staging.upload(this.key, this.options());
      } else {
        const stream = (this.stream ??= this.newStream());
        const multipart = !stream.unsent;
        etag = await this.finishStream(stream);
        this.stream = undefined;
        this.base = stream.size;
        // Later writes change the local copy instead of downloading what was just sent.
        const spool = this.spool;
        this.spool = undefined;
        if (multipart) this.staging = await spool?.take(Buffer.alloc(0), 0).catch(() => undefined);
        else await spool?.close();
      }
      this.base = this.size;
      this.dirty = false;
      this.attr = { ...this.attr, size: this.size, etag };
      return etag;
    });
  }

  async close(): Promise<void> {
    await this.serial(() => {
      this.closed = true;
      return this.discard();
    });
  }

  private async finishStream(stream: StreamingUpload): Promise<string> {
    try {
      return await stream.finish(this.options());
    } catch (err) {
      if (!stream.unsent) {
        this.broken = err;
        this.stream = undefined;
      }
      throw err;
    }
  }

  private async discard(): Promise<void> {
    await this.stream?.abort();
    this.stream = undefined;
    await this.spool?.close();
    this.spool = undefined;
    await this.staging?.close();
    this.staging = undefined;
  }

  /** Moves the handle's content to a local staging file (see the file comment for when). */
  private async toStaging(): Promise<void> {
    if (this.staging) return;
    const stream = this.stream;
    if (stream?.unsent) {
      this.staging = await StagingFile.create(this.s.staging, stream.bufferedBytes());
      // Releases the buffer, and a multipart upload started ahead of the first part.
      void stream.abort();
      this.stream = undefined;
      await this.spool?.close();
      this.spool = undefined;
      return;
    }
    if (stream) {
      // Parts already left: they are in the spool, and nothing is published before close (see
      // spool.ts). Past the staging limit this throws EFBIG and the stream goes on as it was.
      await stream.settle();
      this.staging = await this.spool!.take(stream.bufferedBytes(), stream.bufferedFrom);
      this.spool = undefined;
      this.stream = undefined;
      void stream.abort();
      return;
    }
    this.staging =
      this.base === 0
        ? await StagingFile.create(this.s.staging)
        : await StagingFile.fromObject(this.s.staging, this.key, this.base);
  }
}

/**
 * A reader of a file that another handle of this mount is writing: it reads the writer's bytes
 * while the writer holds them, and the file as closed after that (see Filesystem.openShared).
 */
export class WriterView {
  readonly kind = 'read';
  path: string;
  private readonly writer: WriteHandle;
  private readonly reopen: () => Promise<ReadableHandle>;
  private after: Promise<ReadableHandle> | undefined;

  constructor(path: string, writer: WriteHandle, reopen: () => Promise<ReadableHandle>) {
    this.path = path;
    this.writer = writer;
    this.reopen = reopen;
  }

  async read(offset: number, length: number): Promise<Buffer> {
    const local = await this.writer.readLocal(offset, length);
    if (local) return local;
    this.after ??= this.reopen();
    return (await this.after).read(offset, length);
  }

  /** This mount published new content: what was reopened before shows the old one. */
  async invalidate(): Promise<void> {
    const after = this.after;
    this.after = undefined;
    await (await after?.catch(() => undefined))?.close();
  }

  async close(): Promise<void> {
    await this.invalidate();
  }
}

export type ReadableHandle = ReadHandle | LocalReadHandle | WriteHandle | WriterView;
export type Handle = ReadableHandle;
