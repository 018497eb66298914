// A read-only open file: through its own prefetcher from the bucket, or from the write-back
// journal while the newest content waits there; it keeps a local copy when the object is about to
// go while it is open. See "read" and "unlink" in docs/SEMANTICS.md.

import type { FileHandle } from 'node:fs/promises';
import type { HandleSettings } from './file-handle.ts';
import { type Chunk, Prefetcher } from './prefetcher.ts';
import { StagingFile, type UploadFileSettings, uploadFile } from './staging-file.ts';
import type { WriteOptions } from '../s3/object-client.ts';

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
    etag: string | undefined,
    first?: Buffer,
    ahead?: readonly Chunk[],
  ) {
    this.s = s;
    this.path = path;
    this.key = key;
    this.size = size;
    this.etag = etag;
    this.prefetcher = new Prefetcher(s.client, key, size, s.budget, s.readWindow, first, ahead, etag);
  }

  /** The version this handle reads, when the store named it. */
  private etag: string | undefined;

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

  /** read() when its bytes are in readahead already (see Prefetcher.readNow); undefined otherwise. */
  readNow(offset: number, length: number, into?: Buffer): Buffer | undefined {
    if (this.copy || this.local) return undefined;
    return this.prefetcher.readNow(offset, length, into);
  }

  /**
   * This mount has just replaced the file's content (a writer's close, a truncate): read the new
   * one from now on, from the bucket (`size` bytes) or from the journal's file, as a reader of a
   * local file sees every change. What was fetched ahead of the old content is dropped.
   */
  async reload(size: number, etag: string | undefined, local?: LocalReadHandle): Promise<void> {
    // A read still running on the old prefetcher finishes first (see read()).
    if (this.reading > 0) this.retired.push(this.prefetcher);
    else this.prefetcher.close();
    await this.local?.close();
    this.local = local;
    this.size = size;
    this.etag = etag;
    this.prefetcher = new Prefetcher(this.s.client, this.key, size, this.s.budget, this.s.readWindow, undefined, [], etag);
  }

  /**
   * The object is about to be deleted (unlink) or replaced (rename over it) while this handle is
   * open: as on a local filesystem, the handle keeps reading what it opened, from a local copy
   * made now, of the version it opened. Throws EFBIG above --staging-limit, and `changed` when
   * another client replaced the object meanwhile; the handle then fails once the object is gone.
   */
  async keepCopy(): Promise<void> {
    this.copy ??= StagingFile.fromObject(this.s.staging, this.key, this.size, this.etag);
    await this.copy.catch((err: unknown) => {
      this.copy = undefined;
      throw err;
    });
  }

  /** Puts the copy made by keepCopy back as the object `key`; false when there is none. */
  async putBack(key: string, options: WriteOptions): Promise<boolean> {
    const copy = await this.copy?.catch(() => undefined);
    if (!copy) return false;
    await copy.upload(key, options);
    return true;
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
    // Its pieces go back for other GETs: not while a read may still be copying out of them.
    if (this.reading > 0) this.retired.push(this.prefetcher);
    else this.prefetcher.close();
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

  /** Nothing to do: the descriptor keeps the journal's file readable whatever happens to the object. */
  async keepCopy(): Promise<void> {}

  /** Uploads what the descriptor reads as the object `key` (see ReadHandle.putBack). */
  async putBack(key: string, options: WriteOptions, s: UploadFileSettings): Promise<boolean> {
    this.reading++;
    try {
      const { size } = await this.fh.stat();
      await uploadFile(s, this.fh, size, key, options);
      return true;
    } finally {
      if (--this.reading === 0 && this.closing) await this.fh.close();
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.reading === 0) await this.fh.close();
  }
}
