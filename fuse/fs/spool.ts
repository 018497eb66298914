// A local copy of what a stream has sent. A file streamed to the bucket (streaming-upload.ts) can
// still be written out of order later: a seek back, a truncate, a read of bytes already sent.
// Those bytes then exist only in an unfinished multipart upload, which nobody can read back, and
// completing it to get them would publish a half-written file (a crash before close would leave
// it in the bucket, in place of the old object). So each part is also written to a staging file
// as it leaves, and such a write moves the handle to that file instead: the upload is aborted and
// the file goes up whole at close, as any staged file does. Small files, which never leave their
// first part buffer, never touch the disk. Past --staging-limit the copy is dropped, and a write
// out of order is refused with EFBIG, as for any object that large; a cache disk that fails drops
// it too (logged once), and that write gets the disk's errno. The copy is written with direct
// I/O where it can (StagingFile.writeThrough): through the page cache it cost more CPU than the
// upload itself.

import { FsError, toErrno } from './errno.ts';
import { StagingFile, type StagingSettings } from './staging-file.ts';
import type { KeepPart } from './streaming-upload.ts';

export class Spool {
  private readonly s: StagingSettings;
  private readonly key: string;
  private file: Promise<StagingFile> | undefined;
  /** Why the copy is incomplete, once it is. */
  private lost: FsError | undefined;

  /** `lost`: the copy is known to be incomplete from the start (a stream that goes on after close). */
  constructor(s: StagingSettings, key: string, lost?: FsError) {
    this.s = s;
    this.key = key;
    this.lost = lost;
  }

  readonly keep: KeepPart = async (body, offset) => {
    if (this.lost) return;
    if (offset + body.length > this.s.limit) {
      this.lose(new FsError('EFBIG', `${this.key}: over the staging limit of ${this.s.limit}; only sequential writes`));
      return;
    }
    try {
      this.file ??= StagingFile.create(this.s);
      await (await this.file).writeThrough(body, offset);
    } catch (err) {
      // Any failure of the cache disk (full, turned read-only by a file-system error, an I/O
      // error) drops the copy as the limit does: the stream does not need it, only a later write
      // out of order does, and that write gets the disk's errno (ENOSPC, EROFS, EIO).
      if (!this.lost) this.s.copyDropped?.(this.key, err);
      this.lose(err instanceof FsError ? err : new FsError(toErrno(err), `${this.key}: local copy failed: ${String(err)}`));
    }
  };

  /**
   * The whole content as a staging file, with `rest` (the bytes not yet sent) written at
   * `offset`; the spool lets go of it. Call once the stream has settled. Throws when the copy
   * could not be kept.
   */
  async take(rest: Buffer, offset: number): Promise<StagingFile> {
    if (this.lost) throw this.lost;
    const file = await (this.file ?? StagingFile.create(this.s));
    this.file = undefined;
    try {
      if (rest.length > 0) await file.write(rest, offset);
    } catch (err) {
      await file.close();
      throw err;
    }
    return file;
  }

  private lose(why: FsError): void {
    this.lost ??= why;
    void this.close();
  }

  async close(): Promise<void> {
    const file = this.file;
    this.file = undefined;
    await (await file?.catch(() => undefined))?.close();
  }
}
