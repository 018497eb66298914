// What the mount believes about names, for a TTL: attributes by path (or "does not exist"), and
// whole directory listings. Our own changes update it directly, so a process sees its own writes
// at once; other hosts' changes show after the TTL, and at the latest at the next open(), which
// always asks the server (close-to-open consistency).

import type { Attr } from './metadata.ts';

/** The entries of a listing, in its order, after the one named `name`. */
export function* entriesAfter<T>(names: Iterable<[string, T]>, name: string): Generator<[string, T]> {
  let seen = false;
  for (const entry of names) {
    if (seen) yield entry;
    else seen = entry[0] === name;
  }
}

interface Timed<T> {
  readonly value: T;
  readonly expires: number;
}

export class EntryCache {
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly entries = new Map<string, Timed<Attr | null>>();
  private readonly dirs = new Map<string, Timed<Map<string, Attr>>>();
  /**
   * Counts this mount's own changes. A listing fetched before a change may lack it: whoever fetched
   * one without a reader waiting for it compares this before and after, and drops it if it moved.
   */
  changes = 0;
  /** Edits of each cached listing by this mount's own changes (see `edits`). */
  private readonly listingEdits = new WeakMap<Map<string, Attr>, number>();

  constructor(ttlMs: number, now: () => number = Date.now) {
    this.ttlMs = ttlMs;
    this.now = now;
  }

  /** An Attr, null when known not to exist, undefined when unknown or expired. */
  get(path: string): Attr | null | undefined {
    const e = this.entries.get(path);
    if (!e) return undefined;
    if (e.expires <= this.now()) {
      this.entries.delete(path);
      return undefined;
    }
    return e.value;
  }

  set(path: string, attr: Attr | null): void {
    if (this.ttlMs <= 0) return;
    this.entries.set(path, { value: attr, expires: this.now() + this.ttlMs });
  }

  listing(path: string): Map<string, Attr> | undefined {
    const d = this.dirs.get(path);
    if (!d) return undefined;
    if (d.expires <= this.now()) {
      this.dirs.delete(path);
      return undefined;
    }
    return d.value;
  }

  setListing(path: string, names: Map<string, Attr>): void {
    if (this.ttlMs <= 0) return;
    this.dirs.set(path, { value: names, expires: this.now() + this.ttlMs });
  }

  /**
   * How often this mount changed in place which names `listing` holds, or which of them are
   * non-empty files: an order of its files derived from it is stale once this moves.
   */
  edits(listing: Map<string, Attr>): number {
    return this.listingEdits.get(listing) ?? 0;
  }

  private edited(listing: Map<string, Attr>): void {
    this.listingEdits.set(listing, this.edits(listing) + 1);
  }

  /** Records a name we created or changed: its entry and its parent's listing, if cached. */
  put(parent: string, name: string, path: string, attr: Attr): void {
    this.changes++;
    this.set(path, attr);
    const listing = this.listing(parent);
    if (!listing) return;
    const was = listing.get(name);
    if (was?.kind !== attr.kind || was.size > 0 !== attr.size > 0) this.edited(listing);
    listing.set(name, attr);
  }

  /** Records a name we removed. */
  remove(parent: string, name: string, path: string): void {
    this.changes++;
    this.set(path, null);
    const listing = this.listing(parent);
    if (listing?.delete(name)) this.edited(listing);
    this.dirs.delete(path);
  }

  /** Forgets everything at or under `path`, after a directory rename. */
  forgetTree(path: string): void {
    this.changes++;
    const under = path === '/' ? '/' : `${path}/`;
    for (const p of [...this.entries.keys()]) if (p === path || p.startsWith(under)) this.entries.delete(p);
    for (const p of [...this.dirs.keys()]) if (p === path || p.startsWith(under)) this.dirs.delete(p);
  }
}
