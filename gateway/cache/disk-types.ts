// The disk tier's shapes, shared by the store (disk-store.ts) and the proxy that fills it.

import type { FileHandle } from 'node:fs/promises';
import type { EntryMeta } from './entry.ts';
import type { DiskFootprint } from './format.ts';

export interface DiskEntry {
  readonly meta: EntryMeta;
  readonly path: string;
  /** Its file's length and its index entry's memory; worked out from `meta` when not given. */
  footprint?: DiskFootprint;
}

/** Room a fill of announced length holds against --disk-cache while it writes; release is idempotent. */
export interface Reservation {
  release(): void;
}

/** A body being written; `commit` makes it an entry, `abort` throws it away. */
export interface TempFile {
  readonly path: string;
  readonly fh: FileHandle;
}

/** What a read of the index found: entries indexed, their bytes, and files discarded. */
export interface LoadResult {
  readonly entries: number;
  readonly bytes: number;
  readonly discarded: number;
}
