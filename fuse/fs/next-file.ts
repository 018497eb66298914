// Readahead across files. A process that has read whole files one after another (cp -r, tar,
// rsync) will most likely open the next file of the directory next. Once the current file's last
// bytes have been asked for, the link would fall idle at its end and again during the next
// open's round trip; so the next file in the directory listing is asked for then, its first
// window and the rest ahead of it, exactly as open() would have.
//
// A few guesses are held at once (one per reader, when several processes copy side by side), each
// for a short while and for at most 16 MiB past its first window: the oldest guess when a fifth
// comes, a change to that name through this mount, or the deadline gives its memory back; the
// reader's own readahead takes over after the open. Close-to-open still holds: open() takes a
// guess only after a HEAD made inside the open shows the same ETag and size, so data fetched
// before the open is used only when the object is provably the one the open sees.

import type { ObjectClient, ObjectHead } from '../s3/object-client.ts';
import type { MemoryBudget } from './memory-budget.ts';
import { type Chunk, INITIAL_WINDOW, releaseChunks, requestAhead } from './prefetcher.ts';

/** A guess not taken by then is given up: the reader went elsewhere. */
const GUESS_TTL_MS = 5000;
/** Guesses held at once: one per reader copying side by side. */
const MAX_GUESSES = 4;
/** Bytes a guess asks for past its first window; the reader's readahead goes on from there. */
const GUESS_AHEAD = 16 * 2 ** 20;

export interface Fetched {
  readonly body: Buffer;
  readonly head: ObjectHead;
  /** Chunks after `body`, their memory taken from the budget; the taker owns them. */
  readonly ahead: readonly Chunk[];
}

interface Guess {
  readonly path: string;
  readonly first: Promise<{ body: Buffer; head: ObjectHead }>;
  readonly ahead: Chunk[];
  readonly timer: NodeJS.Timeout;
}

/** Of the names in a listing (in its order), the first regular, non-empty file after `name`. */
export function nextFileIn(
  names: Iterable<[string, { kind: string; size: number }]>,
  name: string,
): string | undefined {
  let seen = false;
  for (const [n, attr] of names) {
    if (seen && attr.kind === 'file' && attr.size > 0) return n;
    if (n === name) seen = true;
  }
  return undefined;
}

export class NextFilePrefetch {
  private readonly client: ObjectClient;
  private readonly budget: MemoryBudget;
  private readonly maxWindow: number;
  private readonly guesses = new Map<string, Guess>();
  /** Guesses made and taken, for tests. */
  made = 0;
  taken = 0;

  constructor(client: ObjectClient, budget: MemoryBudget, maxWindow: number) {
    this.client = client;
    this.budget = budget;
    this.maxWindow = Math.min(maxWindow, GUESS_AHEAD);
  }

  /** Starts fetching `path` (object `key`, believed `size` bytes), giving up the oldest guess if need be. */
  start(path: string, key: string, size: number): void {
    if (this.guesses.has(path)) return;
    const oldest = this.guesses.keys().next().value;
    if (this.guesses.size >= MAX_GUESSES && oldest !== undefined) this.drop(oldest);
    if (!this.budget.tryAcquire(INITIAL_WINDOW, this.budget.limit * 0.75)) return;
    const first = this.client.getWithHead(key, { start: 0, end: INITIAL_WINDOW });
    first.then(
      (got) => this.budget.release(INITIAL_WINDOW - got.body.length),
      () => this.budget.release(INITIAL_WINDOW),
    );
    const ahead = size > INITIAL_WINDOW ? requestAhead(this.client, key, size, this.budget, this.maxWindow) : [];
    const timer = setTimeout(() => this.drop(path), GUESS_TTL_MS);
    timer.unref();
    this.guesses.set(path, { path, first, ahead, timer });
    this.made++;
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
    if (!got || !now || now.etag !== got.head.etag || now.size !== got.head.size) {
      if (got) this.budget.release(got.body.length);
      releaseChunks(g.ahead, this.budget);
      return undefined;
    }
    this.taken++;
    return { body: got.body, head: got.head, ahead: g.ahead };
  }

  /** Gives up the guess for `path`, if any, returning its memory. */
  drop(path: string): void {
    const g = this.guesses.get(path);
    if (!g) return;
    this.guesses.delete(path);
    clearTimeout(g.timer);
    releaseChunks(g.ahead, this.budget);
    g.first.then(
      (got) => this.budget.release(got.body.length),
      () => undefined,
    );
  }
}
