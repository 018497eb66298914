// The filesystem's semantics as plain async methods over an ObjectClient: no FUSE, no network of
// its own, so every rule here is tested with the in-memory and fault-injecting clients. Methods
// take absolute paths inside the mount and throw FsError (or errors toErrno() can name).
// docs/SEMANTICS.md is the contract these files implement, split by the semantics they implement:
// fs-core.ts (shared state, start-up, shutdown) <- attributes.ts (lookup, getattr, readdir) <-
// reads.ts (open, read) <- writes.ts (create, write, flush, release, truncate) <- namespace.ts
// (mkdir, rmdir, unlink, symlink, rename, chmod, chown, utimens).

import { Namespace } from './namespace.ts';

export type { DirEntry, FilesystemOptions, Owner, StatFs } from './fs-types.ts';
export type { FsLogger } from './log.ts';

export class Filesystem extends Namespace {}
