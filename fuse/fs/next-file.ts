// Readahead across files. A process that has read whole files one after another (cp -r, tar,
// rsync) will most likely open the next file of the directory next. Without help the link would
// fall idle at each file's end: once the file's last bytes have arrived, nothing more is asked for
// until the reader has drained them, closed, opened the next file and waited a round trip for its
// first bytes. So the reader's readahead window goes on past the end of its file into the next
// file in the directory (in listing order, or by inode number as cp -r reads: Reads.noteWalk
// learns which from the walker): the bytes of the window that lie beyond the end are asked for
// from the next file, as the reader moves towards the end, and keep the link busy through the
// boundary and the next open.
//
// A guess is bounded. At most a few are held at once (one per reader, when several processes copy
// side by side), each for a short while after the reader last moved towards it, and for at most a
// first window plus 16 MiB until a guess has been taken; after that, as far as the reader's own
// window. A guess not taken (the reader went elsewhere) brings the 16 MiB limit back. The oldest
// guess when a fifth comes, a change to that name through this mount, or the deadline gives its
// memory back; the reader's own readahead takes over after the open. Close-to-open still holds:
// open() takes a guess only after a HEAD made inside the open shows the same ETag and size, so
// data fetched before the open is used only when the object is provably the one the open sees.

import type { ObjectClient, ObjectHead } from '../s3/object-client.ts';
import { ReadVersion } from '../s3/read-version.ts';
import type { MemoryBudget } from './memory-budget.ts';
import { askFor, type Chunk, dropChunks, INITIAL_WINDOW, pieceSize, READAHEAD_SHARE } from './prefetcher.ts';
import { ReadWindow } from './read-window.ts';

/** A guess the reader has not moved towards for this long is given up: it went elsewhere. */
const GUESS_TTL_MS = 5000;
/** Guesses held at once: one per reader copying side by side. */
const MAX_GUESSES = 4;
/** How long an open waits, once its HEAD has answered, for the first bytes of its guess. */
const FIRST_GRACE_MS = 1000;
/** Bytes a guess asks for past its first window until a guess has been taken. */
const UNPROVEN_AHEAD = 16 * 2 ** 20;

export interface Fetched {
  readonly body: Buffer;
  readonly head: ObjectHead;
  /** Chunks after `body`, their memory taken from the budget; the taker owns them. */
  readonly ahead: readonly Chunk[];
}

interface Guess {
  readonly path: string;
  readonly key: string;
  readonly size: number;
  /** The listing's ETag: every GET of the guess asks for that version only (If-Match). */
  readonly etag: string;
  readonly version: ReadVersion;
  readonly first: Promise<{ body: Buffer; head: ObjectHead }>;
  /** Contiguous chunks from the end of the first window on; more are added as the reader nears. */
  readonly ahead: Chunk[];
  readonly timer: NodeJS.Timeout;
}

/** The order a walker reads a directory's files in: its listing's, or by inode number. */
export type WalkOrder = 'name' | 'inode';

/**
 * A listing's regular, non-empty files in the order a walker reads them, made once per listing
 * (and again after the mount edits it): finding the file after one costs a lookup, not a pass over
 * the listing, so a walker of a directory of n files pays n, not n squared.
 */
export class WalkIndex {
  readonly order: WalkOrder;
  private readonly names: readonly string[];
  private readonly at: ReadonlyMap<string, number>;
  /** By inode: the names' inode numbers, ascending. */
  private readonly inos: readonly number[];
  private readonly inodeOf: (name: string) => number;

  /** In listing order, or (`inode`) sorted by inode number: the order GNU cp -r reads a directory in (gnulib's savedir sorts by d_ino). */
  constructor(listing: Iterable<[string, { kind: string; size: number }]>, order: WalkOrder, inodeOf: (name: string) => number) {
    const files: { ino: number; name: string }[] = [];
    for (const [n, attr] of listing) if (attr.kind === 'file' && attr.size > 0) files.push({ ino: order === 'inode' ? inodeOf(n) : 0, name: n });
    if (order === 'inode') files.sort((a, b) => a.ino - b.ino);
    this.order = order;
    this.names = files.map((f) => f.name);
    this.inos = files.map((f) => f.ino);
    this.at = new Map(this.names.map((n, i) => [n, i]));
    this.inodeOf = inodeOf;
  }

  /** The file a walker opens after `name`; undefined at the end. */
  next(name: string): string | undefined {
    const i = this.at.get(name);
    if (i !== undefined) return this.names[i + 1];
    if (this.order === 'name') return undefined;
    // Not a non-empty file of the listing (emptied since): the first file past its inode number.
    const ino = this.inodeOf(name);
    let lo = 0;
    let hi = this.inos.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.inos[mid]! <= ino) lo = mid + 1;
      else hi = mid;
    }
    return this.names[lo];
  }
}

export class NextFilePrefetch {
  private readonly client: ObjectClient;
  private readonly budget: MemoryBudget;
  /** The readers' readahead window: how far a guess may reach past its first window. */
  private readonly window: ReadWindow;
  private readonly guesses = new Map<string, Guess>();
  /**
   * A HEAD answered without an ETag (a proxy that drops the header): no guess can be proved the
   * object an open sees, so none is made any more.
   */
  private unprovable = false;
  /** Whether the last guess that ended was opened by its reader: only then may one reach a window. */
  private proven = false;
  /** Guesses made and taken, for tests. */
  made = 0;
  taken = 0;

  /** A number is a window that never changes (see ReadWindow.fixed). */
  constructor(client: ObjectClient, budget: MemoryBudget, window: ReadWindow | number) {
    this.client = client;
    this.budget = budget;
    this.window = typeof window === 'number' ? ReadWindow.fixed(window) : window;
  }

  /**
   * Starts fetching `path` (object `key`, listed with `size` bytes and `etag`): its first window,
   * and its first `reach` bytes when more (see `reach`). Gives up the oldest guess if need be. No
   * guess is made of an object listed without an ETag: nothing could tell its bytes from those of
   * a same-size object written in the same second.
   */
  start(path: string, key: string, listed: { readonly size: number; readonly etag?: string }, reach: number): void {
    const { size, etag } = listed;
    if (this.guesses.has(path) || !etag || this.unprovable) return;
    const oldest = this.guesses.keys().next().value;
    if (this.guesses.size >= MAX_GUESSES && oldest !== undefined) this.drop(oldest, true);
    if (!this.budget.tryAcquire(INITIAL_WINDOW, this.budget.limit * READAHEAD_SHARE)) return;
    const version = new ReadVersion({ etag, size });
    const first = this.client.getWithHead(key, { start: 0, end: INITIAL_WINDOW, ifMatch: etag, version });
    first.then(
      (got) => this.budget.release(INITIAL_WINDOW - got.body.length),
      () => this.budget.release(INITIAL_WINDOW),
    );
    const timer = setTimeout(() => this.drop(path, true), GUESS_TTL_MS);
    timer.unref();
    this.guesses.set(path, { path, key, size, etag, version, first, ahead: [], timer });
    this.made++;
    this.reach(path, reach);
  }

  /**
   * The reader heading for `path` would have its first `bytes` bytes asked for already: adds GETs
   * until they are, within the guess's limit and the budget, and keeps the guess alive.
   */
  reach(path: string, bytes: number): void {
    const g = this.guesses.get(path);
    if (!g) return;
    g.timer.refresh();
    const limit = Math.min(g.size, INITIAL_WINDOW + (this.proven ? this.window.bytes : UNPROVEN_AHEAD));
    const target = Math.min(limit, bytes);
    // GETs of the size the reader's readahead would use.
    const piece = pieceSize(this.window.bytes, this.budget.limit);
    let start = g.ahead.at(-1)?.end ?? INITIAL_WINDOW;
    while (start < target) {
      const chunk = askFor(this.client, g.key, this.budget, start, Math.min(limit, start + piece), g.version);
      if (!chunk) return;
      g.ahead.push(chunk);
      start = chunk.end;
    }
  }

  /** Where the bytes asked for in the guess for `path` end; undefined when it is not guessed. */
  guessedUpTo(path: string): number | undefined {
    const g = this.guesses.get(path);
    return g && (g.ahead.at(-1)?.end ?? INITIAL_WINDOW);
  }

  /**
   * The guessed file's first bytes and readahead when `path` was guessed and `head()` (a HEAD made
   * by this open, called only then) shows the version every GET of the guess asked for; undefined
   * otherwise. A GET of the guess still under way that meets another version fails `changed`,
   * and the reader asks for those bytes again (Prefetcher.read).
   */
  async take(path: string, head: () => Promise<ObjectHead | undefined>): Promise<Fetched | undefined> {
    const g = this.guesses.get(path);
    if (!g) return undefined;
    this.guesses.delete(path);
    clearTimeout(g.timer);
    const first = g.first.then(
      (x) => x,
      () => undefined,
    );
    const now = await head().catch(() => undefined);
    if (now && !now.etag) this.unprovable = true;
    // The first bytes are almost always here by now. A GET still silent a second after the HEAD
    // answered (a connection dropped without a word) must not hold the open: it asks for its own.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), FIRST_GRACE_MS)));
    const got = await Promise.race([first, late]);
    clearTimeout(timer);
    this.proven = true;
    const listed = (h: ObjectHead | undefined) => h !== undefined && h.etag === g.etag && h.size === g.size;
    if (!got || !listed(now) || !listed(got.head)) {
      void first.then((x) => x && this.budget.release(x.body.length));
      dropChunks(g.ahead, this.budget);
      return undefined;
    }
    this.taken++;
    return { body: got.body, head: got.head, ahead: g.ahead };
  }

  /**
   * Gives up the guess for `path`, if any, returning its memory; `missed` when the reader went
   * elsewhere, which limits guesses again until one is taken.
   */
  drop(path: string, missed = false): void {
    const g = this.guesses.get(path);
    if (!g) return;
    if (missed) this.proven = false;
    this.guesses.delete(path);
    clearTimeout(g.timer);
    dropChunks(g.ahead, this.budget);
    g.first.then(
      (got) => this.budget.release(got.body.length),
      () => undefined,
    );
  }
}
