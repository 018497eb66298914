// What an open file is while it is open. A read-only handle reads through its own prefetcher. A
// writable handle starts as a stream (new files, O_TRUNC, truncate to 0), which uploads as it is
// written; the first write that a stream cannot carry — out of order, a read of bytes already
// sent, a truncate to a non-zero size, memory pressure, a rename — moves it to a staging file on
// local disk (the spool's copy, once parts have left: spool.ts). Nothing reaches the bucket before
// flush() (close or fsync), which returns only once the bucket holds every byte, or throws.
// This file holds what they share; each kind has a file of its own.

import type { ObjectClient } from '../s3/object-client.ts';
import type { Journal } from './journal.ts';
import type { MemoryBudget } from './memory-budget.ts';
import type { ReadWindow } from './read-window.ts';
import type { LocalReadHandle, ReadHandle } from './read-handle.ts';
import type { StagingSettings } from './staging-file.ts';
import type { UploadSettings } from './streaming-upload.ts';
import type { WriteHandle } from './write-handle.ts';
import type { WriterView } from './writer-view.ts';

export { LocalReadHandle, ReadHandle } from './read-handle.ts';
export { WriteHandle } from './write-handle.ts';
export { WriterView } from './writer-view.ts';

export interface HandleSettings {
  readonly client: ObjectClient;
  readonly budget: MemoryBudget;
  readonly upload: UploadSettings;
  readonly staging: StagingSettings;
  /** The mount's readahead window, shared by its open files. */
  readonly readWindow: ReadWindow;
  /** Set with --write-back: flush() hands files to the journal instead of uploading them. */
  readonly journal?: Journal;
}

export type ReadableHandle = ReadHandle | LocalReadHandle | WriteHandle | WriterView;
export type Handle = ReadableHandle;
