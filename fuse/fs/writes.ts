// Creating and writing files, flush (close) and fsync, release, and truncate: what decides when
// bytes reach the bucket and who hears about it when they could not. See "write", "close" and
// "truncate" in docs/SEMANTICS.md.

import { isObjectError } from '../s3/object-client.ts';
import { FS_LOG_CODES } from '../errors.ts';
import { FsError } from './errno.ts';
import { LocalReadHandle, ReadHandle, WriteHandle, WriterView } from './file-handle.ts';
import { checkNewPath, parentOf } from './keys.ts';
import { Reads } from './reads.ts';
import type { Owner } from './fs-types.ts';

export class Writes extends Reads {
  /** Files whose close() failed and that were dropped at their release, as their writers were told. */
  notWritten = 0;

  async create(path: string, mode: number, owner?: Owner): Promise<number> {
    this.refuseIfReadOnly();
    checkNewPath(this.prefix, path);
    await this.mustBeDir(parentOf(path));
    const attr = this.newAttr('file', mode, owner);
    const handle = new WriteHandle(this.settings, path, this.key(path), attr, undefined);
    this.nextFile.drop(path);
    this.remember(path, attr);
    this.touchDir(parentOf(path));
    return this.register(handle);
  }

  async write(fh: number, data: Buffer, offset: number): Promise<number> {
    const w = this.writer(fh);
    try {
      await w.write(data, offset);
    } catch (err) {
      // A part that failed to upload fails the write itself; say so where the writer sees EIO.
      if (isObjectError(err)) this.logUploadFailure(w, err);
      throw err;
    }
    return data.length;
  }

  protected logUploadFailure(w: WriteHandle, err: unknown): void {
    this.o.log.error(
      { err, path: w.path, key: w.key, code: FS_LOG_CODES.uploadFailed },
      'upload failed: the writer gets EIO and the data is not in the bucket',
    );
  }

  /**
   * Readers opened before this mount replaced the content of `path` (a writer's close, a
   * truncate) read the new content from now on, as readers of a local file see every change.
   */
  protected async refreshReaders(path: string, size: number, etag: string | undefined): Promise<void> {
    for (const [id, h] of [...this.handles]) {
      if (h.path !== path) continue;
      if (h instanceof WriterView) await h.invalidate();
      else if (h instanceof ReadHandle) {
        const fh = await this.journal?.openPending(this.key(path));
        await h.reload(size, etag, fh && LocalReadHandle.of(path, fh));
      } else if (h instanceof LocalReadHandle) {
        // An older journal entry's file: this descriptor now reads the file as it is.
        this.handles.set(id, await this.openDetached(path));
        await h.close();
      }
    }
  }

  protected async flushWriter(w: WriteHandle): Promise<void> {
    try {
      const etag = await w.flush();
      if (etag !== undefined) {
        this.remember(w.path, { ...w.attr, size: w.size });
        await this.refreshReaders(w.path, w.size, etag);
      }
      if (etag !== undefined || w.unlinked) await this.dropRenamedAway(w);
    } catch (err) {
      w.flushFailed = true;
      this.logUploadFailure(w, err);
      if (err instanceof FsError && err.errno !== 'EIO') throw err;
      throw new FsError('EIO', `upload of ${w.path} failed`);
    }
  }

  /** close(2) lands here: returns only when the bucket holds the data. */
  async flush(fh: number): Promise<void> {
    const h = this.handle(fh);
    if (h.kind === 'write') await this.flushWriter(h);
  }

  async fsync(fh: number): Promise<void> {
    await this.flush(fh);
  }

  /**
   * The kernel sends the release after close(2) has returned, so a truncate(2) by path can reach
   * the handle before it, or while its upload runs: each such change is waited for and published
   * here, never dropped with the handle. The handle leaves `handles` right after the last check,
   * with no await in between, so no later truncate can find it.
   */
  private async publishAtRelease(h: WriteHandle): Promise<void> {
    for (;;) {
      await h.settled();
      if (!h.dirty) return;
      // After a close() that answered EIO the data is dropped, as that writer was told: uploading
      // it now could overwrite what it wrote again elsewhere meanwhile.
      if (h.flushFailed) {
        this.notWritten++;
        this.o.log.warn({ path: h.path, key: h.key }, 'dropping a file whose close() failed: it was not written');
        return;
      }
      await this.flushWriter(h);
    }
  }

  /**
   * `pathless`: libfuse has no path for the file any more (a removed file whose directory was
   * removed too), and so will not unlink its hidden name after this release: the name ends here.
   */
  async release(fh: number, pathless = false): Promise<void> {
    const h = this.handles.get(fh);
    if (!h) return;
    if (h instanceof ReadHandle) {
      this.wholeFileReads = h.readWhole ? this.wholeFileReads + 1 : 0;
      this.lastReadWhole = h.readWhole ? h.path : undefined;
    }
    try {
      if (h.kind === 'write') await this.publishAtRelease(h);
    } finally {
      this.handles.delete(fh);
      if (pathless && ![...this.handles.values()].some((o) => o.path === h.path)) this.hidden.delete(h.path);
      // A WriteHandle shared by several descriptors lives until the last of them is released.
      if (![...this.handles.values()].includes(h)) {
        // Never published: the names it was renamed away from show their objects again.
        for (const [path, away] of [...this.renamedAway]) if (away.writer === h) this.renamedAway.delete(path);
        await h.close();
      }
    }
  }

  async ftruncate(fh: number, size: number): Promise<void> {
    await this.writer(fh).truncate(size);
  }

  async truncate(path: string, size: number): Promise<void> {
    this.refuseIfReadOnly();
    path = this.named(path);
    // A file open for writing takes the change with its content, and publishes both at its close:
    // publishing now would put the writer's unfinished bytes in the bucket.
    const open = this.writersOf(path).at(-1);
    if (open) {
      await open.truncate(size);
      return;
    }
    const attr = await this.lookup(path);
    if (!attr) throw new FsError('ENOENT');
    if (attr.kind === 'dir') throw new FsError('EISDIR');
    const fh = await this.open(path, 1);
    try {
      await this.writer(fh).truncate(size);
      await this.flush(fh);
    } finally {
      await this.release(fh);
    }
  }

  /** Uploads every pending change (for unmount); resolves to the number that failed. */
  async drain(): Promise<number> {
    let failed = 0;
    for (const h of [...this.handles.values()]) {
      if (h.kind !== 'write' || !h.dirty) continue;
      await this.flushWriter(h).catch(() => {
        failed++;
      });
    }
    return failed;
  }
}
