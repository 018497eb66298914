// What the disk tier holds, kept as running totals while entries come and go: bytes per CVMFS
// repository and per host/first-path-segment prefix, and the objects by size. The status page and
// the summary read the first few of each, so a view costs what it shows, not the cache's size (a
// walk over a million entries blocks the process for seconds). The disk store calls add and
// remove for every entry it indexes and drops. Pure.

import type { EntryMeta } from './entry.ts';
import { Ranked, type RankedItem } from './ranked.ts';

/**
 * host + first path segment for HTTP; for objects of the S3 endpoint `s3://bucket/first-segment`,
 * so a dataset staged through the gateway is findable by its bucket and top-level prefix.
 */
export function prefixOfUrl(url: string): string {
  const m = /^([a-z0-9]+):\/\/([^/]+)(\/[^/?]*)?/.exec(url);
  if (!m) return url;
  const seg = m[3] && m[3] !== '/' ? m[3] : '';
  return `${m[1] === 's3' ? 's3://' : ''}${m[2]}${seg}`;
}

export interface Total {
  readonly name: string;
  readonly bytes: number;
}

/** Bytes and objects per name, ranked by bytes. */
class Groups {
  readonly #by = new Map<string, { bytes: number; objects: number }>();
  readonly #ranked = new Ranked<undefined>();

  change(name: string, bytes: number, objects: number): void {
    const g = this.#by.get(name) ?? { bytes: 0, objects: 0 };
    if (g.objects > 0) this.#ranked.remove(name, g.bytes);
    g.bytes += bytes;
    g.objects += objects;
    if (g.objects > 0) {
      this.#by.set(name, g);
      this.#ranked.add(name, g.bytes, undefined);
    } else this.#by.delete(name);
  }

  first(k: number): Total[] {
    return this.#ranked.first(k).map((r) => ({ name: r.id, bytes: r.value }));
  }
}

export class CacheTotals {
  readonly #repos = new Groups();
  readonly #prefixes = new Groups();
  /** Every entry by size, under its cache key (unique in the index); the item is its URL. */
  readonly #objects = new Ranked<string>();

  add(meta: EntryMeta): void {
    this.#objects.add(meta.key, meta.size, meta.url);
    this.#group(meta, 1);
  }

  /** Forgets an entry added before; one never added (or already removed) changes nothing. */
  remove(meta: EntryMeta): void {
    if (this.#objects.remove(meta.key, meta.size)) this.#group(meta, -1);
  }

  #group(meta: EntryMeta, sign: 1 | -1): void {
    if (meta.repo) this.#repos.change(meta.repo, sign * meta.size, sign);
    else this.#prefixes.change(prefixOfUrl(meta.url), sign * meta.size, sign);
  }

  get objects(): number {
    return this.#objects.size;
  }

  /** The `k` CVMFS repositories holding the most bytes. */
  repos(k: number): Total[] {
    return this.#repos.first(k);
  }

  /** The `k` prefixes (objects of no CVMFS repository) holding the most bytes. */
  prefixes(k: number): Total[] {
    return this.#prefixes.first(k);
  }

  /** The `k` largest objects: their URL and size. */
  largest(k: number): { url: string; bytes: number }[] {
    return this.#objects.first(k).map((o: RankedItem<string>) => ({ url: o.item, bytes: o.value }));
  }
}
