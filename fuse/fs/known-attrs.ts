// Attributes learnt from a HEAD, an open or our own writes, kept past the entry cache's TTL. A
// listing carries no user metadata (mode, owner, symlink type, the stored mtime), so without this
// memory every `ls` after the TTL would show a private file with the mount's default mode and
// owner. An entry is used for a listed object only while the object's ETag is the one it was
// learnt with: a changed object is unknown again.

import type { Attr } from './metadata.ts';

/** About 200 bytes an entry: 100,000 names cost some 20 MB at most, the oldest go first. */
const MAX_ENTRIES = 100_000;

export class KnownAttrs {
  private readonly byPath = new Map<string, Attr>();
  private readonly max: number;

  constructor(max = MAX_ENTRIES) {
    this.max = max;
  }

  /** Records attributes read from the object itself (never from a listing). */
  learn(path: string, attr: Attr): void {
    if (attr.fromListing) return;
    this.byPath.delete(path);
    this.byPath.set(path, attr);
    if (this.byPath.size > this.max) this.byPath.delete(this.byPath.keys().next().value!);
  }

  forget(path: string): void {
    this.byPath.delete(path);
  }

  /** Forgets `path` and everything under it. */
  forgetTree(path: string): void {
    const under = path === '/' ? '/' : `${path}/`;
    for (const p of [...this.byPath.keys()]) if (p === path || p.startsWith(under)) this.byPath.delete(p);
  }

  /** What is known of a listed object with this ETag, undefined when it changed or is unknown. */
  object(path: string, etag: string | undefined): Attr | undefined {
    const a = this.byPath.get(path);
    return a && a.kind !== 'dir' && a.etag !== undefined && a.etag !== '' && a.etag === etag ? a : undefined;
  }

  /** What is known of a directory seen in a listing as a common prefix. */
  dir(path: string): Attr | undefined {
    const a = this.byPath.get(path);
    return a?.kind === 'dir' ? a : undefined;
  }
}
