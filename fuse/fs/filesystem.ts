// The filesystem's semantics as plain async methods over an ObjectClient: no FUSE, no network of
// its own, so every rule here is tested with the in-memory and fault-injecting clients. Methods
// take absolute paths inside the mount and throw FsError (or errors toErrno() can name).
// docs/SEMANTICS.md is the contract this file implements.

import { mkdir as mkdirLocal, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isObjectError, type ObjectClient, type ObjectHead } from '../s3/object-client.ts';
import { FS_LOG_CODES } from '../errors.ts';
import { copyObject } from './copy.ts';
import { EntryCache, entriesAfter } from './entry-cache.ts';
import { KnownAttrs } from './known-attrs.ts';
import { abortStaleUploads, removeDeadStaging, stagingDirOf } from './leftovers.ts';
import { FsError } from './errno.ts';
import {
  type Handle,
  type HandleSettings,
  LocalReadHandle,
  ReadHandle,
  WriteHandle,
  WriterView,
} from './file-handle.ts';
import { Journal } from './journal.ts';
import type { FsLogger } from './log.ts';
import {
  baseName,
  checkNewPath,
  dirPrefix,
  entryName,
  fileKey,
  joinPath,
  normalisePrefix,
  parentOf,
} from './keys.ts';
import { BufferPool } from './buffer-pool.ts';
import { MemoryBudget } from './memory-budget.ts';
import {
  type Attr,
  type AttrDefaults,
  attrFromHead,
  attrFromListing,
  implicitDirAttr,
  metadataOf,
  sameMetadata,
  writeOptionsOf,
} from './metadata.ts';
import { nextFileIn, NextFilePrefetch } from './next-file.ts';
import { type Chunk, INITIAL_WINDOW, releaseChunks, requestAhead } from './prefetcher.ts';
import { inParallel } from './staging-file.ts';
import { UploadStreak } from './streaming-upload.ts';

export type { FsLogger } from './log.ts';

export interface FilesystemOptions {
  readonly client: ObjectClient;
  /** Key prefix the mount shows (BUCKET/PREFIX); empty for the whole bucket. */
  readonly prefix: string;
  readonly readOnly: boolean;
  readonly defaults: Omit<AttrDefaults, 'mountedAtMs'>;
  readonly cacheTtlMs: number;
  readonly memoryLimit: number;
  /** Where staging files go; created if missing. */
  readonly cacheDir: string;
  readonly stagingLimit: number;
  readonly firstPartSize: number;
  readonly maxInFlight: number;
  readonly maxReadahead: number;
  /** Directory renames copy every object; above this many, rename answers EXDEV (mv then copies). */
  readonly renameDirLimit: number;
  readonly memoryWaitMs: number;
  /** close() returns once the file is in a crash-safe local journal; uploads follow. */
  readonly writeBack?: boolean;
  /**
   * The kernel checks permissions on the attributes this layer answers (--allow-other, which
   * mounts with default_permissions): then attributes from a listing, whose mode and owner are
   * only defaults, are never answered; the object is looked up first.
   */
  readonly checkPermissions?: boolean;
  /**
   * At start, multipart uploads under the prefix unfinished for longer than this are aborted:
   * a killed mount leaves them, and they are billed. 0 or unset: never.
   */
  readonly abortUploadsAfterMs?: number;
  readonly log: FsLogger;
}

/** Who asked for a new name: its file, directory or symlink belongs to them (as with s3fs). */
export interface Owner {
  readonly uid: number;
  readonly gid: number;
}

export interface DirEntry {
  readonly name: string;
  readonly attr: Attr;
}

export interface StatFs {
  readonly bsize: number;
  readonly frsize: number;
  readonly blocks: number;
  readonly bfree: number;
  readonly bavail: number;
  readonly files: number;
  readonly ffree: number;
  readonly favail: number;
  readonly namemax: number;
}

const O_ACCMODE = 3;
const O_TRUNC = 0o1000;
/** Parallel copies during a directory rename. */
const RENAME_PARALLEL = 8;
/** Whole-file reads in a row after which open() fetches a file's rest with its first bytes. */
const WHOLE_FILE_STREAK = 2;
/** Subdirectories listed ahead of a walker; see listAhead. */
const LIST_AHEAD = 8;
/** A bucket has no size: report 16 TiB free in 4 KiB blocks (the most a 32-bit field holds). */
const STATFS_BLOCKS = 2 ** 32 - 1;

export class Filesystem {
  private readonly o: FilesystemOptions;
  private readonly client: ObjectClient;
  private readonly prefix: string;
  private readonly defaults: AttrDefaults;
  private readonly cache: EntryCache;
  private readonly known = new KnownAttrs();
  readonly budget: MemoryBudget;
  private readonly pool: BufferPool;
  private readonly settings: HandleSettings;
  private readonly handles = new Map<number, Handle>();
  private readonly lookups = new Map<string, Promise<Attr | null>>();
  readonly journal: Journal | undefined;
  private nextHandle = 1;
  /** Read handles closed in a row that had read their whole file without a seek. */
  private wholeFileReads = 0;
  /** Listings asked for ahead of a walker, until they arrive; see listAhead. */
  private readonly listingsAhead = new Map<string, Promise<Map<string, Attr> | undefined>>();
  readonly nextFile: NextFilePrefetch;

  constructor(options: FilesystemOptions) {
    this.o = options;
    this.client = options.client;
    this.prefix = normalisePrefix(options.prefix);
    this.defaults = { ...options.defaults, mountedAtMs: Date.now() };
    this.cache = new EntryCache(options.cacheTtlMs);
    this.budget = new MemoryBudget(options.memoryLimit);
    const pool = new BufferPool(this.budget);
    this.pool = pool;
    this.nextFile = new NextFilePrefetch(options.client, this.budget, options.maxReadahead);
    const common = { client: options.client, pool, firstPartSize: options.firstPartSize };
    const journal = options.writeBack
      ? new Journal(
          join(options.cacheDir, 'journal'),
          { ...common, maxInFlight: options.maxInFlight },
          options.log,
        )
      : undefined;
    this.journal = journal;
    this.settings = {
      client: options.client,
      budget: this.budget,
      maxReadahead: options.maxReadahead,
      journal,
      upload: { ...common, streak: new UploadStreak(), maxInFlight: options.maxInFlight, memoryWaitMs: options.memoryWaitMs },
      staging: {
        ...common,
        dir: stagingDirOf(options.cacheDir),
        limit: options.stagingLimit,
        maxInFlight: options.maxInFlight,
        hasLocal: (key) => journal?.pending(key) !== undefined,
        copyLocal: async (key, dest) => journal?.copyPending(key, dest),
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
    await this.client.checkBucket();
    await mkdirLocal(this.o.cacheDir, { recursive: true, mode: 0o700 });
    const removed = await removeDeadStaging(this.o.cacheDir);
    if (removed.dirs.length > 0)
      this.o.log.warn(removed, 'removed staging files left by a mount that is no longer running');
    await mkdirLocal(this.settings.staging.dir, { recursive: true, mode: 0o700 });
    await this.journal?.open();
    const age = this.o.abortUploadsAfterMs ?? 0;
    if (age > 0 && !this.o.readOnly) this.abortingUploads = this.abortStaleUploads(age);
  }

  /** Resolves once the start-up's abort of stale multipart uploads is done (for tests and stop). */
  abortingUploads: Promise<void> = Promise.resolve();

  private async abortStaleUploads(ageMs: number): Promise<void> {
    try {
      const aborted = await abortStaleUploads(this.client, this.prefix, ageMs);
      if (aborted.length > 0)
        this.o.log.warn(
          { aborted: aborted.length, keys: aborted.slice(0, 20).map((u) => u.key), olderThanMs: ageMs },
          'aborted unfinished multipart uploads left by a mount that died',
        );
    } catch (err) {
      this.o.log.warn(
        { err: String(err), prefix: this.prefix },
        'could not list unfinished multipart uploads (the server may not support it); none aborted',
      );
    }
  }

  /** Removes this process's staging directory; call once every file is closed. */
  async stop(): Promise<void> {
    await this.abortingUploads;
    await rm(this.settings.staging.dir, { recursive: true, force: true });
  }

  /** Attributes of a file whose newest content waits in the write-back journal. */
  private journalAttr(path: string): Attr | undefined {
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
  private async settled(path: string, tree = false): Promise<void> {
    if (!this.journal) return;
    await this.journal.settled(tree ? dirPrefix(this.prefix, path) : this.key(path));
  }

  // ---- attributes and lookup ----

  private key(path: string): string {
    return fileKey(this.prefix, path);
  }

  /** Readers of `path` keep what they opened before its object goes (see ReadHandle.keepCopy). */
  private async keepReaders(path: string): Promise<void> {
    for (const h of this.handles.values()) {
      if (!(h instanceof ReadHandle) || h.path !== path) continue;
      await h.keepCopy().catch((err: unknown) =>
        this.o.log.warn({ path, err: String(err) }, 'an open reader of a removed file cannot keep reading it'),
      );
    }
  }

  private writersOf(path: string): WriteHandle[] {
    const out: WriteHandle[] = [];
    for (const h of this.handles.values())
      if (h.kind === 'write' && h.path === path && !h.unlinked) out.push(h);
    return out;
  }

  private writersUnder(path: string): WriteHandle[] {
    const under = path === '/' ? '/' : `${path}/`;
    const out: WriteHandle[] = [];
    for (const h of this.handles.values())
      if (h.kind === 'write' && h.path.startsWith(under) && !h.unlinked) out.push(h);
    return out;
  }

  /** An open writer's view wins over the bucket's: its size is what the writer has written. */
  private writerAttr(path: string): Attr | undefined {
    const w = this.writersOf(path).at(-1);
    return w ? { ...w.attr, size: w.size } : undefined;
  }

  async getattr(path: string): Promise<Attr> {
    const attr = await this.lookup(path);
    if (!attr) throw new FsError('ENOENT');
    return attr;
  }

  private async lookup(path: string): Promise<Attr | null> {
    if (path === '/') return implicitDirAttr(this.defaults);
    const pending = this.writerAttr(path) ?? this.journalAttr(path);
    if (pending) return pending;
    let cached = this.cache.get(path);
    if (cached === undefined) {
      const listed = this.cache.listing(parentOf(path));
      if (listed) cached = listed.get(baseName(path)) ?? null;
    }
    if (cached !== undefined && !this.unverified(cached)) return cached;
    let inflight = this.lookups.get(path);
    if (!inflight) {
      inflight = this.lookupRemote(path).finally(() => this.lookups.delete(path));
      this.lookups.set(path, inflight);
    }
    return inflight;
  }

  /** Attributes the kernel must not check permissions on: mode and owner may be defaults. */
  private unverified(attr: Attr | null): boolean {
    return attr !== null && this.o.checkPermissions === true && attr.fromListing === true;
  }

  /** HEAD the file, HEAD the directory marker and list the prefix, all at once (one round trip). */
  private async lookupRemote(path: string): Promise<Attr | null> {
    if (Buffer.byteLength(baseName(path)) > 255) throw new FsError('ENAMETOOLONG');
    const key = this.key(path);
    const [file, marker, children] = await Promise.all([
      this.client.head(key),
      this.client.head(`${key}/`),
      this.client.list(`${key}/`, { delimiter: '/', maxKeys: 1 }),
    ]);
    let attr: Attr | null = null;
    // A directory shadows an object of the same name (documented in SEMANTICS.md).
    if (marker) attr = attrFromHead(marker, this.defaults, true);
    // No marker: the defaults are the directory's real attributes, not a guess.
    else if (children.objects.length > 0 || children.prefixes.length > 0)
      attr = { ...implicitDirAttr(this.defaults), fromListing: false };
    else if (file) attr = attrFromHead(file, this.defaults, false);
    if (file && attr?.kind === 'dir')
      this.o.log.warn({ key }, 'object hidden by a directory of the same name');
    this.cache.set(path, attr);
    if (attr) this.known.learn(path, attr);
    return attr;
  }

  private async mustBeDir(path: string): Promise<Attr> {
    const attr = await this.lookup(path);
    if (!attr) throw new FsError('ENOENT');
    if (attr.kind !== 'dir') throw new FsError('ENOTDIR');
    return attr;
  }

  private refuseIfReadOnly(): void {
    if (this.o.readOnly) throw new FsError('EROFS');
  }

  private remember(path: string, attr: Attr): void {
    this.cache.put(parentOf(path), baseName(path), path, attr);
    this.known.learn(path, attr);
  }

  private forget(path: string): void {
    this.cache.remove(parentOf(path), baseName(path), path);
    this.known.forget(path);
    this.nextFile.drop(path);
  }

  // ---- directories ----

  async readdir(path: string): Promise<DirEntry[]> {
    await this.mustBeDir(path);
    let names = this.cache.listing(path) ?? (await this.listingsAhead.get(path));
    if (!names) {
      names = await this.listDir(path);
      this.cacheListing(path, names);
    }
    this.listAhead(path);
    const entries = new Map(names);
    const prefix = dirPrefix(this.prefix, path);
    for (const r of this.journal?.pendingUnder(prefix) ?? []) {
      const name = entryName(prefix, r.key);
      const attr = name === undefined ? undefined : this.journalAttr(joinPath(path, name));
      if (name !== undefined && attr && !r.key.slice(prefix.length).includes('/')) entries.set(name, attr);
    }
    for (const h of this.handles.values()) {
      if (h.kind === 'write' && !h.unlinked && parentOf(h.path) === path) {
        entries.set(baseName(h.path), { ...h.attr, size: h.size });
      }
    }
    return [...entries].map(([name, attr]) => ({ name, attr }));
  }

  /**
   * A walker (find, du, ls -R, cp -r, rsync) that has listed one subdirectory lists the next ones
   * of its parent next, one round trip each. So the next LIST_AHEAD subdirectories, in listing
   * order, are listed now, in parallel: one LIST each, kept only when it holds the whole directory
   * and nothing changed through this mount meanwhile. A readdir of one of them waits for that LIST
   * instead of sending its own. What is listed ahead is cached like any listing, for the TTL.
   */
  private listAhead(path: string): void {
    if (path === '/') return;
    const parent = parentOf(path);
    const siblings = this.cache.listing(parent);
    const self = baseName(path);
    if (siblings?.get(self)?.kind !== 'dir') return;
    let ahead = 0;
    for (const [name, attr] of entriesAfter(siblings, self)) {
      if (attr.kind !== 'dir') continue;
      if (++ahead > LIST_AHEAD) return;
      const dir = joinPath(parent, name);
      if (this.cache.listing(dir) || this.listingsAhead.has(dir)) continue;
      const changes = this.cache.changes;
      const listed = this.listDir(dir, true)
        .then(
          (names) => {
            if (!names || this.cache.changes !== changes) return undefined;
            this.cacheListing(dir, names);
            return names;
          },
          () => undefined,
        )
        .finally(() => this.listingsAhead.delete(dir));
      this.listingsAhead.set(dir, listed);
    }
  }

  /** Caches a directory's listing, and each entry's attributes from it. */
  private cacheListing(path: string, names: Map<string, Attr>): void {
    for (const [name, attr] of names) {
      const child = joinPath(path, name);
      if (attr.kind === 'dir' && this.cache.get(child)?.kind === 'dir') continue;
      this.cache.set(child, attr);
    }
    this.cache.setListing(path, names);
  }

  /**
   * One directory level from ListObjectsV2: sizes and times for `ls -l` without a HEAD each. With
   * `onePage`, a directory that does not fit one page gives undefined instead of more LISTs.
   */
  private async listDir(path: string, onePage: true): Promise<Map<string, Attr> | undefined>;
  private async listDir(path: string): Promise<Map<string, Attr>>;
  private async listDir(path: string, onePage = false): Promise<Map<string, Attr> | undefined> {
    const prefix = dirPrefix(this.prefix, path);
    const names = new Map<string, Attr>();
    let skipped = 0;
    let token: string | undefined;
    do {
      const page = await this.client.list(prefix, { delimiter: '/', continuationToken: token });
      if (onePage && page.nextToken) return undefined;
      for (const p of page.prefixes) {
        const name = entryName(prefix, p);
        if (name === undefined) skipped++;
        else {
          const known = this.known.dir(joinPath(path, name));
          names.set(name, known ? { ...known, fromListing: true } : implicitDirAttr(this.defaults));
        }
      }
      for (const o of page.objects) {
        if (o.key === prefix) continue;
        const name = entryName(prefix, o.key);
        if (name === undefined) skipped++;
        else if (names.get(name)?.kind !== 'dir') {
          // Keep what a HEAD told us (mode, owner, symlink, mtime) while the object is unchanged.
          const known = this.known.object(joinPath(path, name), o.etag);
          names.set(name, known ? { ...known, fromListing: true } : attrFromListing(o, this.defaults));
        }
      }
      token = page.nextToken;
    } while (token);
    if (skipped > 0) this.o.log.debug({ prefix, skipped }, 'keys with no POSIX name left out of a listing');
    return names;
  }

  async mkdir(path: string, mode: number, owner?: Owner): Promise<void> {
    this.refuseIfReadOnly();
    checkNewPath(this.prefix, path);
    await this.mustBeDir(parentOf(path));
    if (await this.lookup(path)) throw new FsError('EEXIST');
    const attr: Attr = { ...this.newAttr('dir', mode, owner), size: 0 };
    await this.client.put(`${this.key(path)}/`, Buffer.alloc(0), writeOptionsOf(attr));
    this.remember(path, attr);
    this.cache.setListing(path, new Map());
  }

  async rmdir(path: string): Promise<void> {
    this.refuseIfReadOnly();
    if (path === '/') throw new FsError('EBUSY');
    await this.mustBeDir(path);
    await this.settled(path, true);
    const prefix = dirPrefix(this.prefix, path);
    const page = await this.client.list(prefix, { maxKeys: 2 });
    if (page.objects.some((o) => o.key !== prefix) || this.writersUnder(path).length > 0) {
      throw new FsError('ENOTEMPTY');
    }
    await this.client.delete(prefix);
    this.forget(path);
  }

  // ---- files ----

  private newAttr(kind: Attr['kind'], mode: number, owner: Owner | undefined): Attr {
    return {
      kind,
      perm: mode & 0o7777,
      uid: owner?.uid ?? this.defaults.uid,
      gid: owner?.gid ?? this.defaults.gid,
      size: 0,
      mtimeMs: Date.now(),
    };
  }

  private register(handle: Handle): number {
    const id = this.nextHandle++;
    this.handles.set(id, handle);
    return id;
  }

  private handle(fh: number): Handle {
    const h = this.handles.get(fh);
    if (!h) throw new FsError('EBADF');
    return h;
  }

  private writer(fh: number): WriteHandle {
    const h = this.handle(fh);
    if (h.kind !== 'write') throw new FsError('EBADF');
    return h;
  }

  /** Another handle's unsaved writes go to the bucket first, so this open sees them. */
  private async flushWritersOf(path: string): Promise<void> {
    for (const w of this.writersOf(path)) if (w.dirty) await this.flushWriter(w);
  }

  async create(path: string, mode: number, owner?: Owner): Promise<number> {
    this.refuseIfReadOnly();
    checkNewPath(this.prefix, path);
    await this.mustBeDir(parentOf(path));
    const attr = this.newAttr('file', mode, owner);
    const handle = new WriteHandle(this.settings, path, this.key(path), attr, undefined);
    this.nextFile.drop(path);
    this.remember(path, attr);
    return this.register(handle);
  }

  async open(path: string, flags: number): Promise<number> {
    const writing = (flags & O_ACCMODE) !== 0;
    const truncating = writing && (flags & O_TRUNC) !== 0;
    if (writing) {
      this.refuseIfReadOnly();
      this.nextFile.drop(path);
    }
    const key = this.key(path);
    const writer = this.writersOf(path).filter((w) => w.dirty).at(-1);
    if (writer && !truncating) return this.openShared(path, key, writer, writing);
    const journaled = this.journal?.pending(key);
    if (journaled) {
      const attr = this.journalAttr(path)!;
      if (writing)
        return this.register(
          new WriteHandle(this.settings, path, key, attr, truncating ? undefined : journaled.size),
        );
      const fh = await this.journal!.openPending(key);
      if (fh) return this.register(LocalReadHandle.of(path, fh));
      // Uploaded meanwhile: the bucket has it now.
    }
    // Close-to-open: every open asks the bucket, whatever the cache says. A reader of a file
    // known to be non-empty asks with a GET of its first bytes, which answers both at once.
    if (!writing) {
      const fast = await this.openForReading(path, key);
      if (fast !== undefined) return fast;
    }
    const head = await this.client.head(key);
    // Truncating a file that is being written here for the first time, so not yet in the bucket.
    if (!head && writer) return this.register(new WriteHandle(this.settings, path, key, writer.attr, undefined));
    if (!head) {
      const attr = await this.lookup(path);
      if (attr?.kind === 'dir') throw new FsError('EISDIR');
      this.cache.set(path, null);
      throw new FsError('ENOENT');
    }
    const attr = attrFromHead(head, this.defaults, false);
    if (!writer) this.remember(path, attr);
    if (!writing) return this.register(new ReadHandle(this.settings, path, key, head.size));
    return this.register(new WriteHandle(this.settings, path, key, attr, truncating ? undefined : head.size));
  }

  /**
   * Another handle of this mount is writing `path` and has not closed it. Its bytes must not reach
   * the bucket before that close (a crash would leave them there as a partial object), so this
   * open shares them instead: a reader reads through the writer while it holds them, and the file
   * as closed after that; a writer starts from a copy of them. When the writer's stream has
   * already sent parts (past its first 16 MiB), those bytes are nowhere to be read, and the size
   * the kernel shows is the writer's, so the file as last closed is no consistent view either:
   * the open is refused with EBUSY until the writer closes.
   */
  private async openShared(path: string, key: string, writer: WriteHandle, writing: boolean) {
    const busy = () => new FsError('EBUSY', `${path} is being written by another process; open it after that closes`);
    if (writing) {
      const copy = await writer.localCopy();
      if (!copy) throw busy();
      return this.register(new WriteHandle(this.settings, path, key, writer.attr, copy.size, copy));
    }
    if (!(await writer.keepLocal())) throw busy();
    const reopen = async () => {
      const fh = await this.open(path, 0);
      const h = this.handle(fh);
      this.handles.delete(fh);
      return h;
    };
    return this.register(new WriterView(path, writer, reopen));
  }

  /**
   * Opens for reading with one round trip: a ranged GET that also brings size, ETag and metadata.
   * Skipped (undefined) for files believed empty — s3rver drops a ranged GET of an empty object —
   * and when the memory budget has no room for the first chunk.
   */
  private async openForReading(path: string, key: string): Promise<number | undefined> {
    const known = this.cache.get(path) ?? this.cache.listing(parentOf(path))?.get(baseName(path));
    const guessedUpTo = this.nextFile.guessedUpTo(path);
    if (guessedUpTo !== undefined) {
      // The rest of the window is asked for now, inside the open, so that it travels while the
      // HEAD checks the guess instead of after the first read; both go if the check fails.
      const more =
        known?.kind === 'file' && known.size > guessedUpTo
          ? requestAhead(this.client, key, known.size, this.budget, this.settings.maxReadahead, guessedUpTo)
          : [];
      const guessed = await this.nextFile.take(path, () => this.client.head(key));
      // `more` was sized from the listing: it fits only an object of that size.
      if (guessed && guessed.head.size === known?.size)
        return this.readHandleFrom(path, key, guessed, [...guessed.ahead, ...more]);
      releaseChunks(more, this.budget);
      if (guessed) return this.readHandleFrom(path, key, guessed, guessed.ahead);
    }
    if (known?.kind !== 'file' || known.size === 0) return undefined;
    if (!this.budget.tryAcquire(INITIAL_WINDOW)) return undefined;
    // After whole-file reads, the rest of the file is asked for alongside its first bytes.
    let ahead =
      this.wholeFileReads >= WHOLE_FILE_STREAK && known.size > INITIAL_WINDOW
        ? requestAhead(this.client, key, known.size, this.budget, this.settings.maxReadahead)
        : [];
    let got: { body: Buffer; head: ObjectHead };
    try {
      got = await this.client.getWithHead(key, { start: 0, end: INITIAL_WINDOW });
    } catch (err) {
      this.budget.release(INITIAL_WINDOW);
      releaseChunks(ahead, this.budget);
      if (isObjectError(err, 'not-found')) return undefined;
      throw err;
    }
    this.budget.release(INITIAL_WINDOW - got.body.length);
    if (got.head.size !== known.size) {
      // Replaced since it was listed: what was asked for ahead may belong to the old object.
      releaseChunks(ahead, this.budget);
      ahead = [];
    }
    return this.readHandleFrom(path, key, got, ahead);
  }

  /** A read handle starting with a fetched first window; the head refreshes what we know. */
  private readHandleFrom(
    path: string,
    key: string,
    got: { body: Buffer; head: ObjectHead },
    ahead: readonly Chunk[],
  ): number {
    this.remember(path, attrFromHead(got.head, this.defaults, false));
    return this.register(new ReadHandle(this.settings, path, key, got.head.size, got.body, ahead));
  }

  async read(fh: number, offset: number, length: number): Promise<Buffer> {
    const h = this.handle(fh);
    const data = await h.read(offset, length);
    if (this.wholeFileReads >= WHOLE_FILE_STREAK && h instanceof ReadHandle && h.finishingInOrder) {
      if (!h.guessedNext) {
        h.guessedNext = true;
        h.next = this.guessNext(h.path, h.windowPastEnd);
      } else if (h.next !== undefined) {
        this.nextFile.reach(h.next, h.windowPastEnd);
      }
    }
    return data;
  }

  /**
   * Starts fetching the file after `path` in its directory's cached listing, its first `reach`
   * bytes at least; returns its path. See next-file.ts.
   */
  private guessNext(path: string, reach: number): string | undefined {
    const dir = parentOf(path);
    const listing = this.cache.listing(dir);
    const name = listing && nextFileIn(listing, baseName(path));
    if (name === undefined) return undefined;
    const next = joinPath(dir, name);
    if (this.writersOf(next).length > 0 || this.journal?.pending(this.key(next))) return undefined;
    this.nextFile.start(next, this.key(next), listing!.get(name)!.size, reach);
    return next;
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

  private logUploadFailure(w: WriteHandle, err: unknown): void {
    this.o.log.error(
      { err, path: w.path, key: w.key, code: FS_LOG_CODES.uploadFailed },
      'upload failed: the writer gets EIO and the data is not in the bucket',
    );
  }

  private async flushWriter(w: WriteHandle): Promise<void> {
    try {
      const etag = await w.flush();
      if (etag !== undefined) this.remember(w.path, { ...w.attr, size: w.size });
    } catch (err) {
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

  async release(fh: number): Promise<void> {
    const h = this.handles.get(fh);
    if (!h) return;
    if (h instanceof ReadHandle) this.wholeFileReads = h.readWhole ? this.wholeFileReads + 1 : 0;
    try {
      if (h.kind === 'write' && h.dirty) await this.flushWriter(h);
    } finally {
      this.handles.delete(fh);
      await h.close();
    }
  }

  async ftruncate(fh: number, size: number): Promise<void> {
    await this.writer(fh).truncate(size);
  }

  async truncate(path: string, size: number): Promise<void> {
    this.refuseIfReadOnly();
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

  async unlink(path: string): Promise<void> {
    this.refuseIfReadOnly();
    await this.settled(path);
    const attr = await this.lookup(path);
    if (!attr) throw new FsError('ENOENT');
    if (attr.kind === 'dir') throw new FsError('EISDIR');
    for (const w of this.writersOf(path)) w.unlinked = true;
    await this.keepReaders(path);
    await this.client.delete(this.key(path));
    this.forget(path);
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
  }

  async readlink(path: string): Promise<string> {
    const attr = await this.lookup(path);
    if (!attr) throw new FsError('ENOENT');
    if (attr.kind !== 'symlink') throw new FsError('EINVAL');
    return (await this.client.get(this.key(path))).toString();
  }

  // ---- metadata ----

  async chmod(path: string, mode: number): Promise<void> {
    await this.setMeta(path, (a) => ({ ...a, perm: mode & 0o7777 }));
  }

  async chown(path: string, uid: number, gid: number): Promise<void> {
    // -1 (as an unsigned 32-bit number from the kernel) means "leave unchanged".
    const keep = (v: number) => v === -1 || v === 0xffffffff;
    await this.setMeta(path, (a) => ({ ...a, uid: keep(uid) ? a.uid : uid, gid: keep(gid) ? a.gid : gid }));
  }

  async utimens(path: string, _atimeMs: number, mtimeMs: number): Promise<void> {
    await this.setMeta(path, (a) => ({ ...a, mtimeMs }), true);
  }

  /**
   * Mode, owner and times live in object metadata, which S3 can only replace by copying the object
   * onto itself. A file still open for writing takes the change with its upload instead.
   */
  private async setMeta(path: string, change: (a: Attr) => Attr, setsMtime = false): Promise<void> {
    this.refuseIfReadOnly();
    if (path === '/') return;
    await this.settled(path);
    const writers = this.writersOf(path);
    if (writers.some((w) => w.dirty)) {
      for (const w of writers) {
        w.attr = change(w.attr);
        if (setsMtime) w.mtimeSet = true;
      }
      return;
    }
    const attr = await this.lookup(path);
    if (!attr) throw new FsError('ENOENT');
    const key = attr.kind === 'dir' ? `${this.key(path)}/` : this.key(path);
    const head = await this.client.head(key);
    const current = head ? attrFromHead(head, this.defaults, attr.kind === 'dir') : attr;
    const next = change(current);
    if (head && sameMetadata(current, next)) return;
    if (!head && attr.kind === 'dir') {
      await this.client.put(key, Buffer.alloc(0), writeOptionsOf(next));
    } else if (!head) {
      throw new FsError('ENOENT');
    } else {
      const options = { metadata: { ...head.metadata, ...metadataOf(next) }, contentType: head.contentType };
      await copyObject(this.client, key, key, head.size, options, RENAME_PARALLEL);
    }
    // Handles still open (closed but not yet released) must not show the old attributes.
    for (const w of writers) w.attr = { ...next, size: w.size };
    this.remember(path, next);
  }

  // ---- rename ----

  async rename(from: string, to: string): Promise<void> {
    this.refuseIfReadOnly();
    if (from === to) return;
    checkNewPath(this.prefix, to);
    // Everything under `from` must be in the bucket before it is copied server-side.
    await this.flushWritersOf(from);
    for (const w of this.writersUnder(from)) if (w.dirty) await this.flushWriter(w);
    await this.settled(from, true);
    await this.settled(from);
    const src = await this.lookup(from);
    if (!src) throw new FsError('ENOENT');
    await this.mustBeDir(parentOf(to));
    const dst = await this.lookup(to);
    if (src.kind === 'dir') {
      if (to.startsWith(`${from}/`)) throw new FsError('EINVAL');
      if (dst && dst.kind !== 'dir') throw new FsError('ENOTDIR');
      if (dst && (await this.readdir(to)).length > 0) throw new FsError('ENOTEMPTY');
      await this.renameDir(from, to, src);
    } else {
      if (dst?.kind === 'dir') throw new FsError('EISDIR');
      await this.flushWritersOf(from);
      const size = (await this.lookup(from))?.size ?? src.size;
      await this.keepReaders(from);
      if (dst) await this.keepReaders(to);
      await copyObject(this.client, this.key(from), this.key(to), size, undefined, RENAME_PARALLEL);
      await this.client.delete(this.key(from));
      for (const w of this.writersOf(from)) {
        w.path = to;
        w.key = this.key(to);
      }
      this.forget(from);
      this.remember(to, src);
    }
  }

  /** Copies every object under the directory, then deletes the originals: not atomic. */
  private async renameDir(from: string, to: string, attr: Attr): Promise<void> {
    const fromPrefix = dirPrefix(this.prefix, from);
    const toPrefix = dirPrefix(this.prefix, to);
    const objects: { key: string; size: number }[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.list(fromPrefix, { continuationToken: token });
      objects.push(...page.objects);
      if (objects.length > this.o.renameDirLimit) {
        throw new FsError('EXDEV', `${from} holds more than ${this.o.renameDirLimit} objects`);
      }
      token = page.nextToken;
    } while (token);
    for (const w of this.writersUnder(from)) if (w.dirty) await this.flushWriter(w);
    await inParallel(objects, RENAME_PARALLEL, async (o) => {
      const target = toPrefix + o.key.slice(fromPrefix.length);
      await copyObject(this.client, o.key, target, o.size, undefined, RENAME_PARALLEL);
    });
    if (!objects.some((o) => o.key === fromPrefix)) {
      await this.client.put(toPrefix, Buffer.alloc(0), writeOptionsOf(implicitDirAttr(this.defaults)));
    }
    await this.client.deleteMany(objects.map((o) => o.key));
    for (const w of this.writersUnder(from)) {
      w.path = to + w.path.slice(from.length);
      w.key = this.key(w.path);
    }
    this.cache.forgetTree(from);
    this.cache.forgetTree(to);
    this.known.forgetTree(from);
    this.known.forgetTree(to);
    this.forget(from);
    this.remember(to, attr);
  }

  // ---- whole filesystem ----

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
    for (const h of this.handles.values()) if (h.kind === 'write' && h.dirty && !h.unlinked) n++;
    return n;
  }

  /** Resolves when the write-back journal has uploaded everything (at once without one). */
  async journalSettled(): Promise<void> {
    await this.journal?.settled();
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
