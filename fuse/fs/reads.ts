// Opening files, and reading them: close-to-open consistency (every open asks the bucket), the
// one-round-trip open of a reader, readahead across files, and an open of a file another handle
// of this mount is writing. See "open" and "read" in docs/SEMANTICS.md.

import { isObjectError, type ObjectHead } from '../s3/object-client.ts';
import { FsError } from './errno.ts';
import { type Handle, LocalReadHandle, ReadHandle, WriteHandle, WriterView } from './file-handle.ts';
import { baseName, joinPath, parentOf } from './keys.ts';
import { type Attr, attrFromHead } from './metadata.ts';
import { WalkIndex, type WalkOrder } from './next-file.ts';
import { type Chunk, dropChunks, INITIAL_WINDOW, READAHEAD_SHARE, requestAhead } from './prefetcher.ts';
import { Attributes } from './attributes.ts';

const O_ACCMODE = 3;
const O_TRUNC = 0o1000;
/** Whole-file reads in a row after which open() fetches a file's rest with its first bytes. */
const WHOLE_FILE_STREAK = 2;

export class Reads extends Attributes {
  async open(path: string, flags: number): Promise<number> {
    // Through the hidden name of a put-back file, that name is in use again (put-back-names.ts).
    this.putBackNames.opened(path, Date.now());
    path = this.named(path);
    const writing = (flags & O_ACCMODE) !== 0;
    // The name libfuse keeps for a removed file still open is not a file: nothing to read, and
    // not free to write until that file is closed.
    if (this.hidden.has(path)) throw new FsError(writing ? 'EBUSY' : 'ENOENT');
    const truncating = writing && (flags & O_TRUNC) !== 0;
    if (writing) {
      this.refuseIfReadOnly();
      this.nextFile.drop(path);
    }
    const key = this.key(path);
    const writer = this.writersOf(path).at(-1);
    if (writer && writing) {
      // One content per file, as one inode has: every writable descriptor shares the handle.
      if (truncating) await writer.truncate(0);
      return this.register(writer);
    }
    if (writer?.dirty) return this.openShared(path, writer);
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
    if (!head) {
      const attr = await this.lookup(path);
      if (attr?.kind === 'dir') throw new FsError('EISDIR');
      this.cache.set(path, null);
      throw new FsError('ENOENT');
    }
    const attr = attrFromHead(head, this.defaults, false);
    if (!writer) this.remember(path, attr);
    if (!writing) return this.register(new ReadHandle(this.settings, path, key, head.size, head.etag));
    return this.register(new WriteHandle(this.settings, path, key, attr, truncating ? undefined : head.size));
  }

  /**
   * A reader of a file that a handle of this mount is writing and has not closed. The writer's
   * bytes must not reach the bucket before that close (a crash would leave them there as a
   * partial object), so the reader reads through the writer while it holds them, and the file as
   * closed after that. When the writer's stream has already sent parts (past its first 16 MiB),
   * those bytes are nowhere to be read, and the size the kernel shows is the writer's, so the
   * file as last closed is no consistent view either: the open is refused with EBUSY until the
   * writer closes. (A writable open shares the writer itself: see open().)
   */
  protected async openShared(path: string, writer: WriteHandle) {
    if (!(await writer.keepLocal()))
      throw new FsError('EBUSY', `${path} is being written by another process; open it after that closes`);
    return this.register(new WriterView(path, writer, () => this.openDetached(path)));
  }

  /** A read-only handle on `path` as it is now, not registered under any descriptor. */
  protected async openDetached(path: string): Promise<Handle> {
    const fh = await this.open(path, 0);
    const h = this.handle(fh);
    this.handles.delete(fh);
    return h;
  }

  /**
   * Opens for reading with one round trip: a ranged GET that also brings size, ETag and metadata.
   * Skipped (undefined) for files believed empty — s3rver drops a ranged GET of an empty object —
   * and when the memory budget has no room for the first chunk.
   */
  protected async openForReading(path: string, key: string): Promise<number | undefined> {
    this.noteWalk(path);
    const known = this.cache.get(path) ?? this.cache.listing(parentOf(path))?.get(baseName(path));
    const guessedUpTo = this.nextFile.guessedUpTo(path);
    if (guessedUpTo !== undefined) {
      // The rest of the window is asked for now, inside the open, so that it travels while the
      // HEAD checks the guess instead of after the first read; both go if the check fails.
      const more =
        known?.kind === 'file' && known.size > guessedUpTo
          ? requestAhead(this.client, key, known.size, this.budget, this.settings.readWindow.bytes, guessedUpTo, known.etag || undefined)
          : [];
      const guessed = await this.nextFile.take(path, () => this.client.head(key));
      // `more` was sized from the listing: it fits only an object of that size.
      if (guessed && guessed.head.size === known?.size && (!known.etag || guessed.head.etag === known.etag))
        return this.readHandleFrom(path, key, guessed, [...guessed.ahead, ...more]);
      dropChunks(more, this.budget);
      if (guessed) return this.readHandleFrom(path, key, guessed, guessed.ahead);
    }
    if (known?.kind !== 'file' || known.size === 0) return undefined;
    if (!this.budget.tryAcquire(INITIAL_WINDOW, this.budget.limit * READAHEAD_SHARE)) return undefined;
    // After whole-file reads, the rest of the file is asked for alongside its first bytes.
    let ahead =
      this.wholeFileReads >= WHOLE_FILE_STREAK && known.size > INITIAL_WINDOW
        ? requestAhead(this.client, key, known.size, this.budget, this.settings.readWindow.bytes, undefined, known.etag || undefined)
        : [];
    let got: { body: Buffer; head: ObjectHead };
    try {
      got = await this.client.getWithHead(key, { start: 0, end: INITIAL_WINDOW });
    } catch (err) {
      this.budget.release(INITIAL_WINDOW);
      dropChunks(ahead, this.budget);
      if (isObjectError(err, 'not-found')) return undefined;
      throw err;
    }
    this.budget.release(INITIAL_WINDOW - got.body.length);
    // An answer without an ETag (a proxy that drops the header) says nothing against the listing's.
    if (got.head.size !== known.size || (known.etag && got.head.etag && got.head.etag !== known.etag)) {
      // Replaced since it was listed: what was asked for ahead may belong to the old object.
      dropChunks(ahead, this.budget);
      ahead = [];
    }
    return this.readHandleFrom(path, key, got, ahead);
  }

  /** A read handle starting with a fetched first window; the head refreshes what we know. */
  protected readHandleFrom(
    path: string,
    key: string,
    got: { body: Buffer; head: ObjectHead },
    ahead: readonly Chunk[],
  ): number {
    this.remember(path, attrFromHead(got.head, this.defaults, false));
    return this.register(new ReadHandle(this.settings, path, key, got.head.size, got.head.etag, got.body, ahead));
  }

  /**
   * `into`, when given, is where the caller will put the bytes: a read that has to gather them
   * from several places writes them there and returns a view of it, instead of new memory.
   */
  async read(fh: number, offset: number, length: number, into?: Buffer): Promise<Buffer> {
    let h = this.handle(fh);
    if (h instanceof ReadHandle || h instanceof LocalReadHandle) {
      const live = await this.readThroughWriter(h.path, offset, length);
      if (live) return live;
      // The descriptor may have been given a fresh handle meanwhile (see refreshReaders).
      h = this.handle(fh);
    }
    const data = await h.read(offset, length, into);
    if (h instanceof ReadHandle) this.afterRead(h);
    return data;
  }

  /**
   * read(), answered at once when the bytes are in readahead already: no promise per read, which
   * was most of a sequential read's CPU on the main thread after the HTTP client. Undefined, having
   * changed nothing, when read() must answer (a writer on the file, bytes still to come, a seek).
   */
  readNow(fh: number, offset: number, length: number, into?: Buffer): Buffer | undefined {
    const h = this.handles.get(fh);
    if (!(h instanceof ReadHandle)) return undefined;
    for (const w of this.handles.values()) if (w.kind === 'write' && w.path === h.path && w.dirty) return undefined;
    const data = h.readNow(offset, length, into);
    if (data) this.afterRead(h);
    return data;
  }

  /** A reader finishing a whole file in order: guess the next one it opens, or reach further into it. */
  private afterRead(h: ReadHandle): void {
    if (this.wholeFileReads < WHOLE_FILE_STREAK || !h.finishingInOrder) return;
    if (!h.guessedNext) {
      h.guessedNext = true;
      h.next = this.guessNext(h.path, h.windowPastEnd);
    } else if (h.next !== undefined) {
      this.nextFile.reach(h.next, h.windowPastEnd);
    }
  }

  /**
   * A reader opened before a writer of the same file on this host reads the writer's content
   * while the writer holds it, as a reader of a local file sees each write. The writer keeps its
   * content local from then on; when its parts are already streaming, the reader goes on with
   * the file as it opened it, until the writer's close refreshes it.
   */
  protected async readThroughWriter(path: string, offset: number, length: number): Promise<Buffer | undefined> {
    const writer = this.writersOf(path).find((w) => w.dirty);
    if (!writer || !(await writer.keepLocal())) return undefined;
    return writer.readLocal(offset, length);
  }

  /** The file a walker reading in `order` opens after `name` in directory `dir`. */
  private nextInWalk(listing: Map<string, Attr>, dir: string, name: string, order: WalkOrder): string | undefined {
    const edits = this.cache.edits(listing);
    let indexes = this.walkIndexes.get(listing);
    if (indexes?.edits !== edits) {
      indexes = { edits };
      this.walkIndexes.set(listing, indexes);
    }
    indexes[order] ??= new WalkIndex(listing, order, (n) => this.inodeOf(joinPath(dir, n), 'file'));
    return indexes[order].next(name);
  }

  /**
   * Each cached listing's files in either walk order, made when first needed and again after the
   * mount changed the listing (a guess is checked at open all the same).
   */
  private readonly walkIndexes = new WeakMap<Map<string, Attr>, { edits: number; name?: WalkIndex; inode?: WalkIndex }>();

  /**
   * A file opened right after another of its directory was read whole: which order the walker
   * reads in, its listing's (find, tar) or by inode number (cp -r), is told by which of the two
   * files follows the other.
   */
  private noteWalk(path: string): void {
    const before = this.lastReadWhole;
    if (before === undefined || parentOf(before) !== parentOf(path)) return;
    const listing = this.cache.listing(parentOf(path));
    if (!listing) return;
    const name = baseName(path);
    for (const order of ['name', 'inode'] as const) {
      if (this.nextInWalk(listing, parentOf(path), baseName(before), order) === name) {
        this.walkOrder = order;
        return;
      }
    }
  }

  /**
   * Starts fetching the file after `path` in its directory's cached listing, its first `reach`
   * bytes at least; returns its path. See next-file.ts.
   */
  protected guessNext(path: string, reach: number): string | undefined {
    const dir = parentOf(path);
    const listing = this.cache.listing(dir);
    const name = listing && this.nextInWalk(listing, dir, baseName(path), this.walkOrder);
    const listed = name === undefined ? undefined : listing!.get(name);
    if (name === undefined || listed?.kind !== 'file') return undefined;
    const next = joinPath(dir, name);
    if (this.writersOf(next).length > 0 || this.journal?.pending(this.key(next))) return undefined;
    this.nextFile.start(next, this.key(next), listed, reach);
    return next;
  }
}
