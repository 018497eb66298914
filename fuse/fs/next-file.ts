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
import { entriesAfter } from './entry-cache.ts';
import type { MemoryBudget } from './memory-budget.ts';
import { askFor, type Chunk, dropChunks, INITIAL_WINDOW, pieceSize, READAHEAD_SHARE } from './prefetcher.ts';
import { ReadWindow } from './read-window.ts';

/** A guess the reader has not moved towards for this long is given up: it went elsewhere. */
const GUESS_TTL_MS = 5000;
/** Guesses held at once: one per reader copying side by side. */
const MAX_GUESSES = 4;
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
  readonly first: Promise<{ body: Buffer; head: ObjectHead }>;
  /** Contiguous chunks from the end of the first window on; more are added as the reader nears. */
  readonly ahead: Chunk[];
  readonly timer: NodeJS.Timeout;
}

/** Of the names in a listing (in its order), the first regular, non-empty file after `name`. */
export function nextFileIn(
  names: Iterable<[string, { kind: string; size: number }]>,
  name: string,
): string | undefined {
  for (const [n, attr] of entriesAfter(names, name)) if (attr.kind === 'file' && attr.size > 0) return n;
  return undefined;
}

/** A listing's regular, non-empty files sorted by inode number (see nextByInode). */
export interface ByInode {
  readonly inos: readonly number[];
  readonly names: readonly string[];
}

/** Sorts a listing's regular, non-empty files by inode number, once per listing. */
export function filesByInode(names: Iterable<[string, { kind: string; size: number }]>, inodeOf: (name: string) => number): ByInode {
  const files: { ino: number; name: string }[] = [];
  for (const [n, attr] of names) if (attr.kind === 'file' && attr.size > 0) files.push({ ino: inodeOf(n), name: n });
  files.sort((a, b) => a.ino - b.ino);
  return { inos: files.map((f) => f.ino), names: files.map((f) => f.name) };
}

/**
 * The file with the next inode number after `ino`: the order GNU cp -r reads a directory in
 * (gnulib's savedir sorts by d_ino). A binary search, so a walker of a large directory pays
 * log n per file, not n.
 */
export function nextByInode(sorted: ByInode, ino: number): string | undefined {
  let lo = 0;
  let hi = sorted.inos.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted.inos[mid]! <= ino) lo = mid + 1;
    else hi = mid;
  }
  return sorted.names[lo];
}

/** The order a walker reads a directory's files in: its listing's, or by inode number. */
export type WalkOrder = 'name' | 'inode';

export class NextFilePrefetch {
  private readonly client: ObjectClient;
  private readonly budget: MemoryBudget;
  /** The readers' readahead window: how far a guess may reach past its first window. */
  private readonly window: ReadWindow;
  private readonly guesses = new Map<string, Guess>();
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
   * Starts fetching `path` (object `key`, believed `size` bytes): its first window, and its first
   * `reach` bytes when more (see `reach`). Gives up the oldest guess if need be.
   */
  start(path: string, key: string, size: number, reach: number): void {
    if (this.guesses.has(path)) return;
    const oldest = this.guesses.keys().next().value;
    if (this.guesses.size >= MAX_GUESSES && oldest !== undefined) this.drop(oldest, true);
    if (!this.budget.tryAcquire(INITIAL_WINDOW, this.budget.limit * READAHEAD_SHARE)) return;
    const first = this.client.getWithHead(key, { start: 0, end: INITIAL_WINDOW });
    first.then(
      (got) => this.budget.release(INITIAL_WINDOW - got.body.length),
      () => this.budget.release(INITIAL_WINDOW),
    );
    const timer = setTimeout(() => this.drop(path, true), GUESS_TTL_MS);
    timer.unref();
    this.guesses.set(path, { path, key, size, first, ahead: [], timer });
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
      const chunk = askFor(this.client, g.key, this.budget, start, Math.min(limit, start + piece));
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
   * by this open, called only then) shows the object unchanged since; undefined otherwise.
   */
  async take(path: string, head: () => Promise<ObjectHead | undefined>): Promise<Fetched | undefined> {
    const g = this.guesses.get(path);
    if (!g) return undefined;
    this.guesses.delete(path);
    clearTimeout(g.timer);
    const [got, now] = await Promise.all([g.first.catch(() => undefined), head().catch(() => undefined)]);
    this.proven = true;
    if (!got || !now || now.etag !== got.head.etag || now.size !== got.head.size) {
      if (got) this.budget.release(got.body.length);
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
