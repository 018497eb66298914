// How a read of the disk index joins an index already in use: a replacement worker serves (and
// stores) while it reads, so what the read found is older than whatever was stored since.

import type { DiskEntry } from './disk-types.ts';
import type { FoundEntry } from './index-scan.ts';

/** The index as the merge sees it. */
export interface MergeTarget {
  /** Every entry indexed, least recently used first. */
  oldestFirst(): Iterable<DiskEntry>;
  /** Takes a key out of the index, leaving its file alone. */
  drop(key: string): void;
  /** Indexes an entry; false when it is not kept (larger than the whole tier). */
  put(entry: DiskEntry): boolean;
  /** Removes a file no entry keeps. */
  removeFile(path: string): void;
}

/** Whether a key was deleted after a version of `responseTime` was stored (IndexReading). */
export type DeletedSince = (key: string, responseTime: number) => boolean;

/**
 * Indexes what the read found (oldest first) below everything stored or used since it began:
 * those entries are taken out, the found ones put in, and they are put back in their order, so
 * the --disk-cache bound evicts the oldest found entries first. Per key the newest version wins
 * and the other's file is removed, and a key deleted since the read began stays deleted.
 */
export function mergeFound(index: MergeTarget, found: readonly FoundEntry[], deletedSince: DeletedSince): void {
  const since = new Map<string, DiskEntry>();
  for (const e of index.oldestFirst()) since.set(e.meta.key, e);
  for (const key of since.keys()) index.drop(key);
  for (const e of found) {
    const s = since.get(e.meta.key);
    if (s?.path === e.path) continue;
    if (deletedSince(e.meta.key, e.meta.responseTime) || (s && s.meta.responseTime > e.meta.responseTime)) {
      index.removeFile(e.path);
      continue;
    }
    if (s) {
      since.delete(e.meta.key);
      index.removeFile(s.path);
    }
    // Larger than --disk-cache (lowered since it was stored): not kept on disk either.
    if (!index.put(e)) index.removeFile(e.path);
  }
  for (const s of since.values()) index.put(s);
}
