// From an object key to the local path it is written to, and which keys must not be written at
// all. Pure: no I/O. A store may hold keys that no directory can: `d//f` and `d/f` (or `e/./g` and
// `e/g`) are two objects but one file, as are `F` and `f` on a case-insensitive filesystem. Such
// keys are found as the listing streams in, with one map entry per local path seen so far (about
// 100 bytes each, bounded by --max-objects), and every key after the first that lands on a path
// is refused: two objects are never written into one file.

/** A download lands in NAME.<key hash>.estuary-partial first; keys ending so are refused. */
export const PARTIAL_SUFFIX = '.estuary-partial';


/** Longest file name Linux filesystems take (NAME_MAX). */
export const NAME_MAX = 255;

/**
 * The '/'-separated local path of a key (relative to the prefix), or why it cannot have one.
 * Empty and `.` segments are dropped (as a shell or `path.normalize` would), so `d//f` and
 * `e/./g` name `d/f` and `e/g`; a `..` segment, a NUL byte or a partial-file name is refused.
 */
export function localRel(rel: string): { path: string } | { refused: string } {
  if (rel.includes('\0')) return { refused: 'it contains a NUL byte' };
  const segments = rel.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.length === 0) return { refused: 'it names no file' };
  for (const s of segments) {
    if (s === '..') return { refused: 'it climbs out of the destination (..)' };
    if (s.endsWith(PARTIAL_SUFFIX)) return { refused: `a name ending in ${PARTIAL_SUFFIX} is stage's own partial file` };
    if (Buffer.byteLength(s) > NAME_MAX) return { refused: `a name is longer than ${NAME_MAX} bytes` };
  }
  return { path: segments.join('/') };
}

export interface Collision {
  /** The local path, as the first key made it. */
  readonly path: string;
  /** The keys that map to it, the one copied first; at most MAX_COLLISION_KEYS. */
  readonly keys: string[];
  /** Further keys that map to it, counted only (a store can list any number of aliases). */
  more: number;
}

/** Keys kept per colliding path: enough to name the problem, bounded whatever the store lists. */
export const MAX_COLLISION_KEYS = 100;

/**
 * Claims of local paths by keys, in listing order. `claim` says whether `key` may write `path`:
 * the first key of a path wins (it may already be copying when a later one is listed, so it is not
 * taken back); a later, different key is refused and recorded. The same key listed twice (a store
 * repeating a page) is neither copied twice nor a collision. Directory/file conflicts (`a` and
 * `a/b`) are left to the filesystem, which refuses the second with ENOTDIR or EISDIR.
 */
export class PathClaims {
  readonly #caseInsensitive: boolean;
  /** Local path (case-folded where the filesystem folds) → the key that claimed it, and its path as written. */
  readonly #byPath = new Map<string, string | { key: string; path: string }>();
  readonly #collisions = new Map<string, Collision>();
  /** The keys kept for each colliding path, to count a repeated one once. */
  readonly #seen = new Map<string, Set<string>>();

  constructor(caseInsensitive: boolean) {
    this.#caseInsensitive = caseInsensitive;
  }

  claim(key: string, path: string): 'first' | 'repeat' | 'collision' {
    const id = this.#caseInsensitive ? path.toLowerCase() : path;
    const owner = this.#byPath.get(id);
    if (owner === undefined) {
      // The path is kept beside the key only when it differs from the map's key (folded case).
      this.#byPath.set(id, id === path ? key : { key, path });
      return 'first';
    }
    const first = typeof owner === 'string' ? { key: owner, path: id } : owner;
    if (first.key === key) return 'repeat';
    let c = this.#collisions.get(id);
    if (!c) {
      c = { path: first.path, keys: [first.key], more: 0 };
      this.#collisions.set(id, c);
      this.#seen.set(id, new Set([first.key]));
    }
    // A Set, not keys.includes(): a store listing n aliases of one path must not cost n² steps.
    const seen = this.#seen.get(id)!;
    if (seen.has(key)) return 'collision';
    if (c.keys.length < MAX_COLLISION_KEYS) {
      c.keys.push(key);
      seen.add(key);
    } else c.more++;
    return 'collision';
  }

  get size(): number {
    return this.#byPath.size;
  }

  collisions(): Collision[] {
    return [...this.#collisions.values()];
  }
}

/** One line naming colliding keys, at most `max` groups (the summary JSON lists them all). */
export function describeCollisions(cs: readonly Collision[], max = 5): string {
  const keys = (c: Collision) => {
    const listed = c.keys.slice(0, max).map((k) => JSON.stringify(k));
    const n = c.keys.length - listed.length + c.more;
    return `${listed.join(', ')}${n > 0 ? ` and ${n} more keys` : ''}`;
  };
  const shown = cs.slice(0, max).map((c) => `${keys(c)} → ${c.path}`);
  const more = cs.length > max ? `; and ${cs.length - max} more` : '';
  return `${shown.join('; ')}${more}`;
}
