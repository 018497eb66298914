// A writable open file (see file-handle.ts for what it is while open): a stream that uploads as
// it is written, or a staging file on local disk, published only at flush (close or fsync).

import type { WriteOptions } from '../s3/object-client.ts';
import { cacheDiskCode, FsError, toErrno } from './errno.ts';
import type { HandleSettings } from './file-handle.ts';
import { type Attr, writeOptionsOf } from './metadata.ts';
import { Spool } from './spool.ts';
import { StagingFile } from './staging-file.ts';
import { MemoryPressure, StreamingUpload } from './streaming-upload.ts';

/** A failure of the cache disk itself (a system call's code), not of the bucket nor a refusal of ours. */
const isDiskError = (err: unknown) => cacheDiskCode(err) !== undefined;

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
  /**
   * Why the stream published at the last flush had no local copy: an append then goes on as a
   * stream that starts with the published bytes copied in the bucket (StreamingUpload.after).
   */
  private copyLost: FsError | undefined;
  dirty: boolean;
  /** Set when bytes were lost in a failed upload: every later write and flush fails. */
  private broken: unknown;
  /**
   * Set when the last flush (close, fsync) failed and nothing was written since: that writer was
   * told the data is not in the bucket, so the release after it must not upload it after all.
   */
  flushFailed = false;
  /** Set by unlink: the data is dropped at flush instead of recreating the file. */
  unlinked = false;
  /**
   * The size of an unlinked file whose bytes could not be kept on the cache disk: writes to it
   * are taken and dropped (as its close would drop them), reads fail.
   */
  private dropping: number | undefined;
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
    return this.stream?.size ?? this.staging?.size ?? this.dropping ?? this.base;
  }

  /**
   * The file is removed while this descriptor is open (unlink, a rename over it, libfuse hiding
   * it). Its content (what was published, and what a stream holds) is first kept in a staging
   * file; then `remove` takes the object away, this handle's operations held meanwhile, so no flush
   * publishes between the two. Only a removal that succeeded unlinks the handle: nothing of it is
   * published any more, but the descriptor stays readable and writable, as POSIX keeps an unlinked
   * file's. A removal that failed leaves the handle writing the file, and its close publishes it.
   * Resolves the error of keeping when the content could not be kept (cache disk,
   * --staging-limit): later writes are then dropped at once and reads fail. Rejects with the
   * removal's error.
   */
  unlink(remove: () => Promise<void>): Promise<unknown> {
    return this.serial(async () => {
      let lost: unknown;
      // A stream would only upload parts to be thrown away at close: its bytes go local too.
      if (!this.staging && (this.base > 0 || this.stream)) {
        await this.toStaging().catch((err: unknown) => {
          lost = err;
        });
      }
      try {
        await remove();
      } catch (err) {
        // A DELETE whose answer was lost (a timeout) may have been carried out all the same: what
        // is held locally is published at close, so the file is never gone while its writer was
        // told it was kept.
        if (this.staging) this.dirty = true;
        throw err;
      }
      this.unlinked = true;
      this.copyLost = undefined;
      if (lost !== undefined) {
        const size = this.size;
        await this.discard();
        this.dropping = size;
      }
      return lost;
    });
  }

  /**
   * A removal undone (Removals.undoHide): the handle writes the file again, and its close
   * publishes what it holds. Bytes dropped at the removal (none could be kept) fail the close.
   */
  relink(): Promise<void> {
    return this.serial(async () => {
      if (!this.unlinked) return;
      this.unlinked = false;
      this.dirty = true;
      if (this.dropping !== undefined) this.broken = new FsError('EIO', `${this.key}: its bytes were dropped when it was removed`);
    });
  }

  /** Operations on one handle run one at a time, in the order the kernel sent them. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Resolves once no operation is queued on this handle, including those queued meanwhile. */
  async settled(): Promise<void> {
    let q: Promise<unknown>;
    do {
      q = this.queue;
      await q;
    } while (q !== this.queue);
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
      if (this.dropping !== undefined && !this.stream && !this.staging) {
        this.dropping = Math.max(this.dropping, offset + data.length);
        this.dirty = true;
        return;
      }
      if (!this.stream && !this.staging && offset === 0 && this.base === 0 && !this.s.journal) {
        this.stream = this.newStream();
      }
      if (this.copyLost && !this.stream && !this.staging && offset === this.base) await this.streamOn(this.copyLost);
      if (this.stream && offset === this.stream.size) {
        try {
          await this.stream.write(data, this.options);
        } catch (err) {
          if (!(err instanceof MemoryPressure)) throw err;
          await this.toStaging();
          await this.staging!.write(data, offset);
        }
      } else {
        try {
          await this.toStaging();
          await this.staging!.write(data, offset);
        } catch (err) {
          if (!(await this.appendDespiteDisk(err, data, offset))) throw err;
        }
      }
      this.dirty = true;
      this.flushFailed = false;
      const now = Date.now();
      this.attr = { ...this.attr, mtimeMs: now, ctimeMs: now, size: this.size };
    });
  }

  read(offset: number, length: number): Promise<Buffer> {
    return this.serial(async () => {
      if (this.dropping !== undefined && !this.stream && !this.staging) {
        throw new FsError('EIO', `${this.path}: removed while open, and the cache disk could not keep its bytes`);
      }
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
      // The published bytes to go on from are under the old name.
      this.copyLost = undefined;
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
      this.flushFailed = false;
      const now = Date.now();
      this.attr = { ...this.attr, mtimeMs: now, ctimeMs: now, size: this.size };
    });
  }

  /** Uploads pending changes. Returns the new ETag, or undefined when there was nothing to do. */
  flush(): Promise<string | undefined> {
    return this.serial(async () => {
      if (!this.dirty) return undefined;
      if (this.unlinked) {
        // Nothing to publish; what it holds stays readable through the descriptor until close.
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
        this.copyLost = undefined;
        if (multipart) {
          this.staging = await spool?.take(Buffer.alloc(0), 0).catch((err: unknown) => {
            this.copyLost = err instanceof FsError ? err : new FsError(toErrno(err), String(err));
            return undefined;
          });
        } else {
          await spool?.close();
          // Sent in one PUT, past what a local copy may hold: an append goes on as a stream after
          // the published bytes, as it does after a stream sent in parts.
          if (stream.size > this.s.staging.limit) {
            this.copyLost = new FsError('EFBIG', `${this.key}: over the staging limit of ${this.s.staging.limit}`);
          }
        }
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

  /**
   * An append to the object as published (nothing changed since) whose local copy the cache disk
   * failed to make or take (full, read-only, an I/O error): sent as a stream that goes on after the
   * published bytes, as the stream that wrote them would have. False when it cannot be.
   */
  private async appendDespiteDisk(err: unknown, data: Buffer, offset: number): Promise<boolean> {
    if (this.dirty || this.stream || offset !== this.base || this.s.journal || !isDiskError(err)) return false;
    await this.staging?.close();
    this.staging = undefined;
    const why = new FsError(toErrno(err), `${this.key}: local copy failed: ${String(err)}`);
    const stream = await this.streamOn(why);
    if (!stream) return false;
    this.s.staging.copyDropped?.(this.key, err);
    await stream.write(data, this.options);
    return true;
  }

  /**
   * Goes on streaming after the object just published, whose copy was lost for `why`. Under the
   * smallest part (5 MiB) its bytes are read back into the new stream's first part instead: they
   * cannot be a part followed by more. Undefined when there is nothing to go on from.
   */
  private async streamOn(why: FsError): Promise<StreamingUpload | undefined> {
    this.copyLost = undefined;
    if (this.base === 0 || this.unlinked) return undefined;
    const spool = new Spool(this.s.staging, this.key, why);
    const after = StreamingUpload.after(this.s.upload, this.key, this.base, this.attr.etag, spool.keep);
    if (after) {
      this.spool = spool;
      this.stream = after;
      return after;
    }
    const etag = this.attr.etag === '' ? undefined : this.attr.etag;
    const published = await this.s.client.get(this.key, { start: 0, end: this.base, ifMatch: etag });
    if (published.length !== this.base) throw new FsError('ESTALE', `${this.key} is no longer ${this.base} bytes long`);
    const stream = new StreamingUpload(this.s.upload, this.key, spool.keep);
    await stream.write(published, this.options);
    this.spool = spool;
    this.stream = stream;
    return stream;
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
