// The state every part of the filesystem shares, and the small helpers they all use: the object
// client, the entry cache and what HEADs taught us, the memory budget, the open handles and the
// write-back journal; start-up (and its cleanup after a crash) and shutdown. The operations are
// split by the semantics they implement, one file each, stacked on this one:
//   attributes.ts (lookup, getattr, readdir) <- reads.ts (open, read) <- writes.ts (create,
//   write, flush and close, truncate) <- removals.ts (open files removed) <- namespace.ts (mkdir,
//   rmdir, unlink, symlink, rename, chmod/chown/utimens) = Filesystem (filesystem.ts).
// Each layer calls only the ones below it.

import { mkdir as mkdirLocal, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { EntryCache } from './entry-cache.ts';
import { KnownAttrs } from './known-attrs.ts';
import { abortStaleUploads, claimStaging, newStagingDir, removeDeadStaging, type StagingClaim } from './leftovers.ts';
import { cacheDiskCode, FsError } from './errno.ts';
import { FS_LOG_CODES } from '../errors.ts';
import { type Handle, type HandleSettings, ReadHandle, WriteHandle } from './file-handle.ts';
import { Journal } from './journal.ts';
import type { ObjectClient } from '../s3/object-client.ts';
import type { FilesystemOptions, Owner, StandIn, StatFs } from './fs-types.ts';
import { baseName, fileKey, normalisePrefix, parentOf } from './keys.ts';
import { BufferPool } from './buffer-pool.ts';
import { InodeTable, ROOT_INO } from './inodes.ts';
import { MemoryBudget } from './memory-budget.ts';
import { type Attr, type AttrDefaults, attrFromHead, type Kind } from './metadata.ts';
import { NextFilePrefetch, type WalkOrder } from './next-file.ts';
import { PutBackNames } from './put-back-names.ts';
import { ReadWindow } from './read-window.ts';
import { UploadStreak } from './streaming-upload.ts';
import { LateAborts } from './late-aborts.ts';
import { lacksOperation } from '../s3/s3-errors.ts';
import { within } from '../../lib/backoff.ts';

/** A bucket has no size: report 16 TiB free in 4 KiB blocks (the most a 32-bit field holds). */
const STATFS_BLOCKS = 2 ** 32 - 1;

export class FsCore {
  protected readonly o: FilesystemOptions;
  protected readonly client: ObjectClient;
  protected readonly prefix: string;
  protected readonly defaults: AttrDefaults;
  protected readonly cache: EntryCache;
  protected readonly known = new KnownAttrs();
  protected readonly inodes = new InodeTable();
  /**
   * Times of directories whose entries changed through this mount, which shows them from here
   * instead of its marker's: see "Directory times" in docs/SEMANTICS.md.
   */
  protected readonly dirTimes = new Map<string, { mtimeMs: number; ctimeMs: number }>();
  /** Stand-in paths for keys no POSIX name can show, to those keys (without a trailing slash). */
  protected readonly standIns = new Map<string, StandIn>();
  readonly budget: MemoryBudget;
  protected readonly pool: BufferPool;
  protected readonly settings: HandleSettings;
  protected readonly handles = new Map<number, Handle>();
  protected readonly lookups = new Map<string, Promise<Attr | null>>();
  readonly journal: Journal | undefined;
  protected nextHandle = 1;
  /** Read handles closed in a row that had read their whole file without a seek. */
  protected wholeFileReads = 0;
  /** The file the last reader closed had read whole, and the order walkers seem to read in. */
  protected lastReadWhole: string | undefined;
  protected walkOrder: WalkOrder = 'name';
  /** Listings asked for ahead of a walker, until they arrive; see listAhead. */
  protected readonly listingsAhead = new Map<string, Promise<Map<string, Attr> | undefined>>();
  readonly nextFile: NextFilePrefetch;
  /**
   * Names a file open with unsaved changes was renamed away from, to that writer and the old
   * key: the old object stays in the bucket until the writer publishes under its new name (a
   * crash meanwhile leaves the bucket as it was), and the name is shown as gone until then.
   */
  protected readonly renamedAway = new Map<string, { writer: WriteHandle; key: string }>();
  /**
   * Names libfuse gave open files that were removed (see Namespace.hideOpen), to the attributes
   * they had: they exist only here, for the descriptors still open, until the kernel unlinks them.
   */
  protected readonly hidden = new Map<string, Attr>();
  /** Hidden names of files put back after a failed rename over them (see put-back-names.ts). */
  protected readonly putBackNames = new PutBackNames();

  constructor(options: FilesystemOptions) {
    this.o = options;
    this.client = options.client;
    this.prefix = normalisePrefix(options.prefix);
    this.defaults = { ...options.defaults, mountedAtMs: Date.now() };
    this.cache = new EntryCache(options.cacheTtlMs);
    this.budget = new MemoryBudget(options.memoryLimit);
    const pool = new BufferPool(this.budget);
    this.pool = pool;
    const readWindow = new ReadWindow(options.maxReadahead, options.initialReadahead);
    this.nextFile = new NextFilePrefetch(options.client, this.budget, readWindow);
    this.lateAborts = new LateAborts(options.client, options.log);
    const common = { client: options.client, pool, firstPartSize: options.firstPartSize, lateAborts: this.lateAborts };
    const journal = options.writeBack
      ? new Journal(
          join(options.cacheDir, 'journal'),
          { ...common, maxInFlight: options.maxInFlight },
          options.log,
          options.journalIdentity,
        )
      : undefined;
    this.journal = journal;
    this.settings = {
      client: options.client,
      budget: this.budget,
      readWindow,
      journal,
      upload: { ...common, streak: new UploadStreak(), maxInFlight: options.maxInFlight, memoryWaitMs: options.memoryWaitMs },
      staging: {
        ...common,
        dir: newStagingDir(options.cacheDir),
        limit: options.stagingLimit,
        maxInFlight: options.maxInFlight,
        hasLocal: (key) => journal?.pending(key) !== undefined,
        copyLocal: async (key, dest) => journal?.copyPending(key, dest),
        copyDropped: (key, err) =>
          options.log.warn(
            { key, cacheDir: options.cacheDir, err: String(err), errno: cacheDiskCode(err), code: FS_LOG_CODES.copyDropped },
            'the cache disk cannot take the local copy of a streamed file, so it is dropped: the stream goes on and is published at close, and a later write out of order, truncate or read of sent bytes of this file fails',
          ),
      },
    };
  }

  /** Budget held by buffers someone is using, leaving out part buffers idle in the pool. */
  get memoryInUse(): number {
    return this.budget.used - this.pool.idleBytes;
  }

  /**
   * Checks the bucket, prepares the cache directory and cleans up after a mount that died (see
   * leftovers.ts); throws what the mount should report. Stale uploads are aborted in the
   * background: a big bucket's listing must not hold up the mount.
   */
  async start(): Promise<void> {
    await this.client.checkBucket(this.prefix);
    await mkdirLocal(this.o.cacheDir, { recursive: true, mode: 0o700 });
    const removed = await removeDeadStaging(this.o.cacheDir);
    if (removed.dirs.length > 0)
      this.o.log.warn(removed, 'removed staging files left by a mount that is no longer running');
    // Locked before it exists, so that no other start ever sees it without its lock held.
    this.stagingClaim = claimStaging(this.settings.staging.dir);
    await mkdirLocal(this.settings.staging.dir, { recursive: true, mode: 0o700 });
    await this.journal?.open();
    const age = this.o.abortUploadsAfterMs ?? 0;
    if (age > 0 && !this.o.readOnly) this.abortingUploads = this.abortStaleUploads(age);
  }

  /** The lock that tells other starts this process's staging directory is in use. */
  private stagingClaim: StagingClaim | undefined;

  /** Resolves once the start-up's abort of stale multipart uploads is done (for tests and stop). */
  abortingUploads: Promise<void> = Promise.resolve();
  /** Aborts of multipart uploads that failed, tried again (late-aborts.ts). */
  readonly lateAborts: LateAborts;

  protected async abortStaleUploads(ageMs: number): Promise<void> {
    try {
      const { aborted, refused } = await abortStaleUploads(this.client, this.prefix, ageMs);
      if (aborted.length > 0)
        this.o.log.warn(
          { aborted: aborted.length, keys: aborted.slice(0, 20).map((u) => u.key), olderThanMs: ageMs },
          'aborted unfinished multipart uploads left by a mount that died',
        );
      if (refused.length > 0)
        this.o.log.warn(
          { refused: refused.length, keys: refused.slice(0, 20).map((u) => u.key), olderThanMs: ageMs },
          'the server refused to abort unfinished multipart uploads left by a mount that died; the next start tries again',
        );
    } catch (err) {
      this.o.log.warn(
        { err: String(err), prefix: this.prefix },
        lacksOperation(err)
          ? 'could not list unfinished multipart uploads (the server does not support it); none aborted'
          : 'could not list unfinished multipart uploads; none aborted, the next start tries again',
      );
    }
  }

  /**
   * Removes this process's staging directory; call once every file is closed. The start-up's
   * abort of stale uploads and the last tries of failed aborts get `withinMs` together.
   */
  async stop(withinMs = 30_000): Promise<void> {
    const until = Date.now() + withinMs;
    await within(this.abortingUploads, withinMs);
    await this.lateAborts.drain(Math.max(0, until - Date.now()));
    await rm(this.settings.staging.dir, { recursive: true, force: true });
    await this.stagingClaim?.release();
    this.stagingClaim = undefined;
  }

  /** Attributes of a file whose newest content waits in the write-back journal. */
  protected journalAttr(path: string): Attr | undefined {
    const r = this.journal?.pending(this.key(path));
    if (!r) return undefined;
    const head = {
      key: r.key,
      size: r.size,
      etag: '',
      lastModified: new Date(r.createdMs),
      metadata: r.options.metadata ?? {},
      contentType: r.options.contentType,
    };
    return attrFromHead(head, this.defaults, false);
  }

  /** Waits until the journal holds nothing for `path` (or anything under it). */
  protected async settled(path: string, tree = false): Promise<void> {
    if (!this.journal) return;
    await this.journal.settled(tree ? this.dirKey(path) : this.key(path));
  }

  /**
   * The key of `path`. A stand-in name for a key no POSIX name can show (see standInName), and
   * every path under one, maps to the real key.
   */
  protected key(path: string): string {
    if (this.standIns.size > 0) {
      for (let p = path; p !== '/'; p = parentOf(p)) {
        const real = this.standIns.get(p);
        if (real !== undefined) return real.key + path.slice(p.length);
      }
    }
    return fileKey(this.prefix, path);
  }

  /**
   * The path and attributes of the file open as `fh`, which libfuse has no path for (a removed
   * file still open, whose directory was removed too): a writer's as it goes on, else those it
   * had when it was removed (hideOpen).
   */
  openedAttr(fh: number): { path: string; attr: Attr } {
    const h = this.handles.get(fh);
    if (!h) throw new FsError('EBADF');
    if (h.kind === 'write') return { path: h.path, attr: { ...h.attr, size: h.size } };
    const attr = this.hidden.get(h.path);
    if (!attr) throw new FsError('ENOENT');
    return { path: h.path, attr };
  }

  /** The inode number of `path`, the same whatever the kernel forgot (see inodes.ts). */
  inodeOf(path: string, kind: Kind): number {
    if (path === '/') return ROOT_INO;
    return this.inodes.of(kind === 'dir' ? this.dirKey(path) : this.key(path));
  }

  /** An entry of directory `path` was created, removed or renamed: its mtime and ctime are now. */
  protected touchDir(path: string): void {
    const now = Date.now();
    this.dirTimes.set(path, { mtimeMs: now, ctimeMs: now });
  }

  /** `attr` of `path`, with the times of a directory changed through this mount. */
  protected withDirTimes(path: string, attr: Attr): Attr {
    const times = attr.kind === 'dir' ? this.dirTimes.get(path) : undefined;
    return times ? { ...attr, ...times } : attr;
  }

  /** The prefix under which a directory's children live (its marker's key). */
  protected dirKey(path: string): string {
    return path === '/' ? this.prefix : `${this.key(path)}/`;
  }

  /** Readers of `path` keep what they opened before its object goes (see ReadHandle.keepCopy). */
  protected async keepReaders(path: string): Promise<void> {
    for (const h of this.handles.values()) {
      if (!(h instanceof ReadHandle) || h.path !== path) continue;
      await h.keepCopy().catch((err: unknown) =>
        this.o.log.warn({ path, err: String(err) }, 'an open reader of a removed file cannot keep reading it'),
      );
    }
  }

  /**
   * The open files being written, each once: every writable descriptor of one file shares one
   * WriteHandle (see Reads.open), as descriptors of one inode share its content.
   */
  protected writers(): Set<WriteHandle> {
    const out = new Set<WriteHandle>();
    for (const h of this.handles.values()) if (h.kind === 'write' && (!h.unlinked || this.hidden.has(h.path))) out.add(h);
    return out;
  }

  protected writersOf(path: string): WriteHandle[] {
    return [...this.writers()].filter((h) => h.path === path);
  }

  protected writersUnder(path: string): WriteHandle[] {
    const under = path === '/' ? '/' : `${path}/`;
    return [...this.writers()].filter((h) => h.path.startsWith(under));
  }

  /** The path the mount knows a file by, for a name libfuse may still give it (see `putBackNames`). */
  protected named(path: string): string {
    return this.putBackNames.named(path, Date.now());
  }

  /** An open writer's view wins over the bucket's: its size is what the writer has written. */
  protected writerAttr(path: string): Attr | undefined {
    const w = this.writersOf(path).at(-1);
    if (w) return { ...w.attr, size: w.size };
    return this.hidden.get(path);
  }

  /**
   * `w` published its content (or was unlinked): the objects of the names it was renamed away
   * from go now, unless something new took the name meanwhile.
   */
  protected async dropRenamedAway(w: WriteHandle): Promise<void> {
    for (const [path, away] of [...this.renamedAway]) {
      if (away.writer !== w) continue;
      // Held until the DELETE went through: a failed one leaves the old name hidden, as it was.
      if (this.writersOf(path).length === 0) await this.client.delete(away.key);
      if (this.renamedAway.get(path) === away) this.renamedAway.delete(path);
    }
  }

  protected refuseIfReadOnly(): void {
    if (this.o.readOnly) throw new FsError('EROFS');
  }

  protected remember(path: string, attr: Attr): void {
    // Something new took the name: the old object there is its to replace, not a writer's to delete.
    this.renamedAway.delete(path);
    // What was fetched ahead for the name may be of what it held before.
    this.nextFile.drop(path);
    this.cache.put(parentOf(path), baseName(path), path, attr);
    this.known.learn(path, attr);
  }

  protected forget(path: string): void {
    this.cache.remove(parentOf(path), baseName(path), path);
    this.known.forget(path);
    this.standIns.delete(path);
    this.nextFile.drop(path);
  }

  protected newAttr(kind: Attr['kind'], mode: number, owner: Owner | undefined): Attr {
    return {
      kind,
      perm: mode & 0o7777,
      uid: owner?.uid ?? this.defaults.uid,
      gid: owner?.gid ?? this.defaults.gid,
      size: 0,
      mtimeMs: Date.now(),
    };
  }

  protected register(handle: Handle): number {
    const id = this.nextHandle++;
    this.handles.set(id, handle);
    return id;
  }

  protected handle(fh: number): Handle {
    const h = this.handles.get(fh);
    if (!h) throw new FsError('EBADF');
    return h;
  }

  protected writer(fh: number): WriteHandle {
    const h = this.handle(fh);
    if (h.kind !== 'write') throw new FsError('EBADF');
    return h;
  }

  statfs(): StatFs {
    return {
      bsize: 4096,
      frsize: 4096,
      blocks: STATFS_BLOCKS,
      bfree: STATFS_BLOCKS,
      bavail: STATFS_BLOCKS,
      files: STATFS_BLOCKS,
      ffree: STATFS_BLOCKS,
      favail: STATFS_BLOCKS,
      namemax: 255,
    };
  }

  /** Files open now, and how many of them hold changes not yet in the bucket. */
  get openFiles(): { open: number; dirty: number } {
    return { open: this.handles.size, dirty: this.pendingUploads };
  }

  /** Open files with changes not yet in the bucket. */
  get pendingUploads(): number {
    let n = 0;
    for (const h of this.writers()) if (h.dirty) n++;
    return n;
  }

  /** Resolves when the write-back journal has uploaded everything (at once without one). */
  async journalSettled(): Promise<void> {
    await this.journal?.settled();
  }
}
