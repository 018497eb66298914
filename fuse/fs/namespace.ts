// Changes to names and to the metadata stored with them: mkdir, rmdir, unlink, symlink and
// readlink, rename of files and directories, chmod, chown and utimens. See "unlink", "mkdir /
// rmdir", "rename" and "chmod, chown, utimens" in docs/SEMANTICS.md.

import { S3_LIMITS, type WriteOptions } from '../s3/object-client.ts';
import { ListingProgress } from '../s3/listing-progress.ts';
import { copyObject } from './copy.ts';
import { CACHE_DISK_ERRNOS, FsError } from './errno.ts';
import { baseName, checkNewPath, parentOf } from './keys.ts';
import {
  type Attr,
  attrFromHead,
  implicitDirAttr,
  metadataOf,
  S_IFMT,
  S_IFREG,
  sameMetadata,
  specialKindOf,
  storedTime,
  withoutCtime,
  writeOptionsOf,
} from './metadata.ts';
import { inParallel } from './staging-file.ts';
import { HIDDEN_NAME, Removals } from './removals.ts';
import type { HideFor, Owner } from './fs-types.ts';

/** Linux's PATH_MAX: a symlink's target, with its terminating NUL, fits in it. */
const PATH_MAX = 4096;
/** Parallel copies during a directory rename. */
const RENAME_PARALLEL = 8;

export class Namespace extends Removals {
  async mkdir(path: string, mode: number, owner?: Owner): Promise<void> {
    this.refuseIfReadOnly();
    checkNewPath(this.prefix, path, true);
    await this.mustBeDir(parentOf(path));
    if (await this.lookup(path)) throw new FsError('EEXIST');
    const attr: Attr = { ...this.newAttr('dir', mode, owner), size: 0 };
    await this.client.put(`${this.key(path)}/`, Buffer.alloc(0), writeOptionsOf(attr));
    this.remember(path, attr);
    this.cache.setListing(path, new Map());
    this.touchDir(parentOf(path));
  }

  async rmdir(path: string): Promise<void> {
    this.refuseIfReadOnly();
    if (path === '/') throw new FsError('EBUSY');
    await this.mustBeDir(path);
    await this.settled(path, true);
    const prefix = this.dirKey(path);
    const page = await this.client.list(prefix, { maxKeys: 2 });
    // A removed file still open is no object: only its descriptors know its name (hideOpen).
    const writing = this.writersUnder(path).filter((w) => !w.unlinked);
    if (page.objects.some((o) => o.key !== prefix) || writing.length > 0) {
      throw new FsError('ENOTEMPTY');
    }
    await this.client.delete(prefix);
    this.forget(path);
    this.dirTimes.delete(path);
    this.touchDir(parentOf(path));
  }

  async unlink(path: string): Promise<void> {
    this.refuseIfReadOnly();
    await this.settled(path);
    // Its object went when the open file was removed (hideOpen); the kernel now ends the name.
    if (this.hidden.delete(path)) return;
    // The last close of a file put back after a failed rename over it: the name it was open under
    // ends, the file stays.
    if (this.putBackNames.lastClose(path, Date.now())) return;
    const attr = await this.lookup(path);
    if (!attr) throw new FsError('ENOENT');
    if (attr.kind === 'dir') throw new FsError('EISDIR');
    // A put-back file still open: libfuse does not know it is, so the mount hides it itself,
    // under the name its descriptors have.
    const openAs = this.putBackNames.openFor(path, Date.now());
    if (openAs !== undefined && this.isOpen(path)) return this.hideOpen(path, openAs, attr);
    this.putBackNames.removed(path);
    await this.removeWritten(path, async () => {
      await this.keepReaders(path);
      await this.client.delete(this.key(path));
    });
    this.forget(path);
    this.touchDir(parentOf(path));
  }

  async symlink(target: string, path: string, owner?: Owner): Promise<void> {
    this.refuseIfReadOnly();
    checkNewPath(this.prefix, path);
    await this.mustBeDir(parentOf(path));
    if (await this.lookup(path)) throw new FsError('EEXIST');
    const body = Buffer.from(target);
    const attr: Attr = { ...this.newAttr('symlink', 0o777, owner), size: body.length };
    await this.client.put(this.key(path), body, writeOptionsOf(attr));
    this.remember(path, attr);
    this.touchDir(parentOf(path));
  }

  /**
   * FIFOs, sockets and device nodes: an empty object whose mode carries the type, as s3fs's mknod
   * stores them, so a bucket moves between the two. The kernel serves a FIFO or a socket itself
   * once it exists; a device number is not kept (s3fs keeps none either). mknod of a regular file
   * makes an empty one.
   */
  async mknod(path: string, mode: number, _rdev: number, owner?: Owner): Promise<void> {
    this.refuseIfReadOnly();
    checkNewPath(this.prefix, path);
    await this.mustBeDir(parentOf(path));
    if (await this.lookup(path)) throw new FsError('EEXIST');
    const type = mode & S_IFMT;
    const kind = type === 0 || type === S_IFREG ? 'file' : specialKindOf(mode);
    if (!kind) throw new FsError('EINVAL', `mknod of an unknown file type ${type.toString(8)}`);
    const attr = this.newAttr(kind, mode, owner);
    await this.client.put(this.key(path), Buffer.alloc(0), writeOptionsOf(attr));
    this.remember(path, attr);
    this.touchDir(parentOf(path));
  }

  /**
   * Copy options that keep an object's mtime across a rename, and move its ctime to the rename
   * (`ctimeMs`, stored, so the mount shows the same ctime before and after its cache expires).
   * An object without x-amz-meta-mtime shows its Last-Modified as mtime, which a copy would reset
   * to the moment of the copy: so the copy then carries that time as metadata. Undefined when the
   * object is gone (the copy then fails as it should).
   */
  protected async keepingMtime(key: string, ctimeMs: number): Promise<WriteOptions | undefined> {
    const head = await this.client.head(key);
    if (!head) return undefined;
    const mtime = head.metadata.mtime ?? String(Math.floor(head.lastModified.getTime() / 1000));
    return { metadata: { ...head.metadata, mtime, ctime: storedTime(ctimeMs) }, contentType: head.contentType };
  }

  async readlink(path: string): Promise<string> {
    const attr = await this.lookup(path);
    if (!attr) throw new FsError('ENOENT');
    if (attr.kind !== 'symlink') throw new FsError('EINVAL');
    // A target is shorter than PATH_MAX, as symlink(2) has it: a bigger body is no link target,
    // and reading it whole would cost the mount its size in memory. Only PATH_MAX bytes are asked
    // for, since the object may have grown since it was listed.
    const tooLong = () => new FsError('ENAMETOOLONG', `${path}: a symlink object of more than ${PATH_MAX - 1} bytes`);
    if (attr.size >= PATH_MAX) throw tooLong();
    const got = await this.client.getWithHead(this.key(path), { start: 0, end: PATH_MAX });
    if (got.head.size >= PATH_MAX) throw tooLong();
    return got.body.toString();
  }

  async chmod(path: string, mode: number): Promise<void> {
    await this.setMeta(path, (a) => ({ ...a, perm: mode & 0o7777 }));
  }

  async chown(path: string, uid: number, gid: number): Promise<void> {
    // -1 (as an unsigned 32-bit number from the kernel) means "leave unchanged".
    const keep = (v: number) => v === -1 || v === 0xffffffff;
    await this.setMeta(path, (a) => ({ ...a, uid: keep(uid) ? a.uid : uid, gid: keep(gid) ? a.gid : gid }));
  }

  /** Either time may be left as it is (undefined: UTIME_OMIT); the access time is not kept. */
  async utimens(path: string, _atimeMs: number | undefined, mtimeMs: number | undefined): Promise<void> {
    if (mtimeMs === undefined) return;
    // Milliseconds are what the mount keeps and stores: the same before and after a cache expiry.
    await this.setMeta(path, (a) => ({ ...a, mtimeMs: Math.round(mtimeMs) }), true);
  }

  /**
   * Mode, owner and times live in object metadata, which S3 can only replace by copying the object
   * onto itself. A file still open for writing takes the change with its upload instead.
   */
  protected async setMeta(path: string, change: (a: Attr) => Attr, setsMtime = false): Promise<void> {
    this.refuseIfReadOnly();
    path = this.named(path);
    if (path === '/') return;
    await this.settled(path);
    // A removed file still open (fchmod, futimens): its object is gone; the change is its own.
    const removed = this.hidden.get(path);
    if (removed) {
      const next = { ...change(removed), ctimeMs: Date.now() };
      this.hidden.set(path, next);
      for (const w of this.writersOf(path)) w.attr = { ...next, size: w.size };
      return;
    }
    const writers = this.writersOf(path);
    if (writers.some((w) => w.dirty)) {
      for (const w of writers) {
        w.attr = { ...change(w.attr), ctimeMs: Date.now() };
        if (setsMtime) w.mtimeSet = true;
      }
      return;
    }
    const attr = await this.lookup(path);
    if (!attr) throw new FsError('ENOENT');
    const key = attr.kind === 'dir' ? `${this.key(path)}/` : this.key(path);
    const head = await this.client.head(key);
    const current = head ? attrFromHead(head, this.defaults, attr.kind === 'dir') : attr;
    let next: Attr = { ...change(current), ctimeMs: Date.now() };
    if (head && sameMetadata(current, next)) return;
    if (!head && attr.kind === 'dir') {
      await this.client.put(key, Buffer.alloc(0), writeOptionsOf(next));
    } else if (!head) {
      throw new FsError('ENOENT');
    } else {
      const options = { metadata: { ...withoutCtime(head.metadata), ...metadataOf(next) }, contentType: head.contentType };
      // The copy is a new version (a new ETag on most servers): a writer goes on from it.
      next = { ...next, etag: await copyObject(this.settings.upload, key, key, head.size, options, RENAME_PARALLEL) };
    }
    // The marker holds the directory's times from now on.
    this.dirTimes.delete(path);
    // Handles still open (closed but not yet released) must not show the old attributes.
    for (const w of writers) w.attr = { ...next, size: w.size };
    this.remember(path, next);
  }

  /**
   * `hiding`: whether this rename is libfuse hiding a file removed while open (the patched addon
   * tells, see scripts/patch-fuse-native.sh); unknown, a rename of an open file to a name of the
   * form libfuse uses is taken for one. `request`: the kernel request the rename belongs to; a
   * rename over an open file that fails undoes libfuse's hide of it in the same request.
   */
  async rename(from: string, to: string, hiding?: boolean, request?: number, hideFor?: HideFor): Promise<void> {
    this.refuseIfReadOnly();
    if (from === to) return;
    const hide = this.takeHide(request, to);
    if (hide?.beforeRename) return this.renameOverHidden(to, hide, () => this.renameOnce(from, to, false, undefined));
    try {
      await this.renameOnce(from, to, hiding, request, hideFor);
    } catch (err) {
      if (hide) await this.undoHide(hide);
      throw err;
    }
  }

  private async renameOnce(from: string, to: string, hiding: boolean | undefined, request: number | undefined, hideFor?: HideFor): Promise<void> {
    checkNewPath(this.prefix, to);
    await this.settled(from, true);
    await this.settled(from);
    const src = await this.lookup(from);
    if (!src) throw new FsError('ENOENT');
    const hide = hiding ?? (HIDDEN_NAME.test(baseName(to)) && this.isOpen(from));
    if (hide && src.kind !== 'dir') {
      // A removed file hidden again has no object to keep: its hide moves only its name.
      if (hideFor === 'rename' && !this.hidden.has(from)) return this.noteRenameHide(from, to, src, request);
      return this.hideOpen(from, to, src, request);
    }
    // A removed file has no name: the one libfuse keeps for it is not the user's to move. Nor is
    // one standing for a file put back: libfuse would unlink the new name at the last close.
    if (this.hidden.has(from) || this.putBackNames.has(from, Date.now())) throw new FsError('ENOENT');
    await this.mustBeDir(parentOf(to));
    const dst = await this.lookup(to);
    if (src.kind === 'dir') {
      checkNewPath(this.prefix, to, true);
      if (to.startsWith(`${from}/`)) throw new FsError('EINVAL');
      if (dst && dst.kind !== 'dir') throw new FsError('ENOTDIR');
      if (dst && (await this.readdir(to)).length > 0) throw new FsError('ENOTEMPTY');
      await this.renameDir(from, to, src);
    } else {
      if (dst?.kind === 'dir') throw new FsError('EISDIR');
      const move = () =>
        this.writersOf(from).some((w) => w.dirty)
          ? this.renameWrittenOrPublished(from, to, src, dst)
          : this.renameObject(from, to, src, dst);
      // The file renamed over is removed: its open writers keep it locally and publish nothing.
      // A put-back file still open, renamed over: libfuse knows it by its hidden name and did not
      // hide it, so the mount does: its descriptors go on under that name, as a removed file's.
      const openAs = dst ? this.putBackNames.openFor(to, Date.now()) : undefined;
      const putBack = openAs === undefined ? [] : [...this.handles.values()].filter((h) => h.path === to);
      if (dst) await this.removeWritten(to, move);
      else await move();
      if (openAs !== undefined && putBack.length > 0) {
        for (const h of putBack) h.path = openAs;
        this.hidden.set(openAs, dst!);
        this.putBackNames.hidden(to, openAs);
      } else if (dst) this.putBackNames.removed(to);
      this.putBackNames.renamed(from, to);
      for (const h of this.handles.values()) if (h.kind === 'read' && h.path === from) h.path = to;
    }
    this.touchDir(parentOf(from));
    this.touchDir(parentOf(to));
  }

  /** A file with nothing unsaved: server-side copy, then delete. */
  protected async renameObject(from: string, to: string, src: Attr, dst: Attr | null): Promise<void> {
    const size = (await this.lookup(from))?.size ?? src.size;
    await this.keepReaders(from);
    if (dst) await this.keepReaders(to);
    const ctimeMs = Date.now();
    const options = await this.keepingMtime(this.key(from), ctimeMs);
    const etag = await copyObject(this.settings.upload, this.key(from), this.key(to), size, options, RENAME_PARALLEL);
    await this.client.delete(this.key(from)).catch((err: unknown) => {
      // Both names hold the source now: not the "nothing happened" a refusal's errno would say.
      const why = err instanceof Error ? err.message : String(err);
      this.o.log.warn({ from, to, err: why }, 'file copied, but its original was not deleted: both names hold it');
      for (const p of [parentOf(from), parentOf(to)]) this.cache.forgetTree(p);
      throw new FsError('EIO', `${from} was copied to ${to} but could not be deleted (${why}): both hold it`);
    });
    this.inodes.rename(this.key(from), this.key(to));
    for (const w of this.writersOf(from)) {
      w.path = to;
      w.key = this.key(to);
      // What it goes on from is now the copy under the new name.
      w.attr = { ...w.attr, etag };
    }
    this.forget(from);
    this.remember(to, { ...src, ctimeMs });
  }

  /**
   * A file open with changes not yet closed: its writer takes them to the new name, where its
   * close publishes them, and nothing is published now (a crash would leave the writer's
   * unfinished bytes in the bucket). The old name's object stays in the bucket, hidden, until that
   * close publishes the new one (see renamedAway): a crash before then leaves the bucket as it
   * was. The target's object stays until that close too, as an overwritten file's does.
   */
  protected async renameWritten(from: string, to: string, dst: Attr | null): Promise<void> {
    await this.keepReaders(from);
    if (dst) await this.keepReaders(to);
    const writers = this.writersOf(from);
    const away = this.key(from);
    for (const w of writers) await w.moveTo(to, this.key(to));
    this.inodes.rename(this.key(from), this.key(to));
    this.forget(from);
    this.remember(to, { ...writers[0]!.attr, size: writers[0]!.size, ctimeMs: Date.now() });
    this.renamedAway.set(from, { writer: writers[0]!, key: away });
  }

  /**
   * renameWritten, unless a writer's stream has no local copy to move (past --staging-limit, or
   * a failed cache disk): then its content is published under the old name first and renamed as a
   * closed file is, and the writer goes on after the copy (WriteHandle.streamOn). A rename never
   * fails for want of a local copy.
   */
  protected async renameWrittenOrPublished(from: string, to: string, src: Attr, dst: Attr | null): Promise<void> {
    try {
      await this.renameWritten(from, to, dst);
    } catch (err) {
      // No local copy to move: the limit, or the cache disk.
      if (!(err instanceof FsError && (err.errno === 'EFBIG' || CACHE_DISK_ERRNOS.has(err.errno)))) throw err;
      for (const w of this.writersOf(from)) if (w.dirty) await this.flushWriter(w);
      await this.renameObject(from, to, src, dst);
    }
  }

  /** Copies every object under the directory, then deletes the originals: not atomic. */
  protected async renameDir(from: string, to: string, attr: Attr): Promise<void> {
    const fromPrefix = this.dirKey(from);
    const toPrefix = this.dirKey(to);
    const objects: { key: string; size: number }[] = [];
    const progress = new ListingProgress(fromPrefix);
    let token: string | undefined;
    do {
      const page = await this.client.list(fromPrefix, { continuationToken: token });
      objects.push(...page.objects);
      if (objects.length > this.o.renameDirLimit) {
        throw new FsError('EXDEV', `${from} holds more than ${this.o.renameDirLimit} objects`);
      }
      token = page.nextToken === undefined ? undefined : progress.next(page.nextToken);
    } while (token);
    // Every key must fit under the new name before anything is copied.
    const longest = Math.max(0, ...objects.map((o) => Buffer.byteLength(o.key) - Buffer.byteLength(fromPrefix)));
    if (Buffer.byteLength(toPrefix) + longest > S3_LIMITS.maxKeyBytes) {
      throw new FsError('ENAMETOOLONG', `${to}: a key under it would be longer than ${S3_LIMITS.maxKeyBytes} bytes`);
    }
    await inParallel(objects, RENAME_PARALLEL, async (o) => {
      const target = toPrefix + o.key.slice(fromPrefix.length);
      await copyObject(this.settings.upload, o.key, target, o.size, await this.keepingMtime(o.key, Date.now()), RENAME_PARALLEL);
    });
    if (!objects.some((o) => o.key === fromPrefix)) {
      await this.client.put(toPrefix, Buffer.alloc(0), writeOptionsOf(implicitDirAttr(this.defaults)));
    }
    try {
      await this.client.deleteMany(objects.map((o) => o.key));
    } catch (err) {
      // Every object is under the new name by now; the old names that were not deleted stay too.
      const why = err instanceof Error ? err.message : String(err);
      this.o.log.warn({ from: fromPrefix, to: toPrefix, err: why }, 'directory copied, but its originals were not all deleted: both names hold it');
      this.cache.forgetTree(from);
      this.cache.forgetTree(to);
      throw new FsError('EIO', `${from} was copied to ${to} but not all of its originals could be deleted (${why}): both hold it`);
    }
    this.inodes.renameTree(fromPrefix, toPrefix);
    // Open files go with their directory; what they hold is published at their close.
    const moving = this.writersUnder(from);
    // Removed files still open go with their directory too: libfuse keeps their hidden names in it.
    for (const [p, a] of [...this.hidden]) {
      if (!p.startsWith(`${from}/`)) continue;
      const moved = to + p.slice(from.length);
      this.hidden.delete(p);
      this.hidden.set(moved, a);
      for (const h of this.handles.values()) if (h.path === p) h.path = moved;
    }
    this.putBackNames.movedTree(from, to);
    // Readers are called by their new names too (a later unlink or rename finds them).
    for (const h of this.handles.values()) if (h.kind === 'read' && h.path.startsWith(`${from}/`)) h.path = to + h.path.slice(from.length);
    for (const w of moving) {
      if (w.path.startsWith(`${to}/`) && this.hidden.has(w.path)) continue;
      const path = to + w.path.slice(from.length);
      await w.moveTo(path, this.key(path));
    }
    this.cache.forgetTree(from);
    this.cache.forgetTree(to);
    this.known.forgetTree(from);
    this.known.forgetTree(to);
    this.forget(from);
    this.remember(to, attr);
    const mtimeMs = this.dirTimes.get(from)?.mtimeMs ?? attr.mtimeMs;
    for (const p of [...this.dirTimes.keys()]) if (p === from || p.startsWith(`${from}/`)) this.dirTimes.delete(p);
    this.dirTimes.set(to, { mtimeMs, ctimeMs: Date.now() });
  }
}
