// The shapes the filesystem's layers share with the mount command: the options a mount is made
// with, and what its operations answer (directory entries, statfs, the owner of a new name).

import type { ObjectClient } from '../s3/object-client.ts';
import type { JournalIdentity } from './journal.ts';
import type { FsLogger } from './log.ts';
import type { Attr, AttrDefaults } from './metadata.ts';

export interface FilesystemOptions {
  readonly client: ObjectClient;
  /** Key prefix the mount shows (BUCKET/PREFIX); empty for the whole bucket. */
  readonly prefix: string;
  readonly readOnly: boolean;
  readonly defaults: Omit<AttrDefaults, 'mountedAtMs'>;
  readonly cacheTtlMs: number;
  readonly memoryLimit: number;
  /** Where staging files go; created if missing. */
  readonly cacheDir: string;
  readonly stagingLimit: number;
  readonly firstPartSize: number;
  readonly maxInFlight: number;
  readonly maxReadahead: number;
  /** Where the readahead window starts before reads show it must grow (read-window.ts). */
  readonly initialReadahead?: number;
  /** Directory renames copy every object; above this many, rename answers EXDEV (mv then copies). */
  readonly renameDirLimit: number;
  readonly memoryWaitMs: number;
  /** close() returns once the file is in a crash-safe local journal; uploads follow. */
  readonly writeBack?: boolean;
  /** The store the journal's files belong to; a journal of another one is refused at start. */
  readonly journalIdentity?: JournalIdentity;
  /**
   * The kernel checks permissions on the attributes this layer answers (--allow-other, which
   * mounts with default_permissions): then attributes from a listing, whose mode and owner are
   * only defaults, are never answered; the object is looked up first.
   */
  readonly checkPermissions?: boolean;
  /**
   * At start, multipart uploads under the prefix unfinished for longer than this are aborted:
   * a killed mount leaves them, and they are billed. 0 or unset: never.
   */
  readonly abortUploadsAfterMs?: number;
  readonly log: FsLogger;
}

/** A key shown under a stand-in name: without its trailing slash, and which of the two it is. */
export interface StandIn {
  readonly key: string;
  /** A common prefix (a directory), not an object of the same key. */
  readonly dir: boolean;
}

/**
 * What the kernel request of a libfuse hide is, when the mount can tell: an unlink of the open
 * file, or a rename over it (the hide is then followed by that rename, in the same request).
 */
export type HideFor = 'unlink' | 'rename';

/** Who asked for a new name: its file, directory or symlink belongs to them (as with s3fs). */
export interface Owner {
  readonly uid: number;
  readonly gid: number;
}

export interface DirEntry {
  readonly name: string;
  readonly attr: Attr;
}

export interface StatFs {
  readonly bsize: number;
  readonly frsize: number;
  readonly blocks: number;
  readonly bfree: number;
  readonly bavail: number;
  readonly files: number;
  readonly ffree: number;
  readonly favail: number;
  readonly namemax: number;
}
