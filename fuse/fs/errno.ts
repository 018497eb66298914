// The one place where failures become errno names. The filesystem layer throws FsError for
// conditions it decides itself (ENOTEMPTY, EISDIR ...) and lets ObjectErrors and local-disk errors
// travel up; toErrno() names them all, and the FUSE adapter turns the name into its number.

import { isObjectError } from '../s3/object-client.ts';
import { s3CodeOf } from '../s3/s3-errors.ts';

export const ERRNO_NAMES = [
  'EPERM',
  'ENOENT',
  'EIO',
  'EBADF',
  'EAGAIN',
  'ENOMEM',
  'EACCES',
  'EBUSY',
  'EEXIST',
  'EXDEV',
  'ENOTDIR',
  'EISDIR',
  'EINVAL',
  'EFBIG',
  'ENOSPC',
  'EROFS',
  'ENAMETOOLONG',
  'ENOSYS',
  'ENOTEMPTY',
  'EILSEQ',
  'EOPNOTSUPP',
  'EDQUOT',
  'ETIMEDOUT',
  'ESTALE',
] as const;

export type ErrnoName = (typeof ERRNO_NAMES)[number];

export class FsError extends Error {
  readonly errno: ErrnoName;

  constructor(errno: ErrnoName, message: string = errno) {
    super(message);
    this.name = 'FsError';
    this.errno = errno;
  }
}

export const fsError = (errno: ErrnoName, message?: string): FsError => new FsError(errno, message);

/** What a failing cache disk answers (full, over quota, turned read-only, an I/O error). */
export const CACHE_DISK_ERRNOS: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EIO']);

/**
 * Linux's errors for a file system that found itself damaged, EFSBADCRC and EFSCORRUPTED, by
 * their numbers: libuv has no names for them. ext4 and XFS answer them, as ext4 does for a moment
 * after an error with errors=remount-ro, before the remount lands.
 */
const CORRUPT_FS: ReadonlyMap<number, string> = new Map([
  [-74, 'EBADMSG'],
  [-117, 'EUCLEAN'],
]);

/** The code of a system call's error that says the cache disk failed, or undefined if it is not one. */
export function cacheDiskCode(err: unknown): string | undefined {
  if (err instanceof FsError || isObjectError(err)) return undefined;
  const { code, errno } = (err ?? {}) as { code?: unknown; errno?: unknown };
  if (typeof code === 'string' && CACHE_DISK_ERRNOS.has(code)) return code;
  return typeof errno === 'number' ? CORRUPT_FS.get(errno) : undefined;
}

/** Local-disk errors (staging files, the cache directory) that keep their own meaning. */
const LOCAL_ERRNOS = new Set<string>(['ENOSPC', 'EDQUOT', 'EACCES', 'EROFS']);

export function toErrno(err: unknown): ErrnoName {
  if (err instanceof FsError) return err.errno;
  if (isObjectError(err)) {
    switch (err.kind) {
      case 'not-found':
        // The file's multipart upload, aborted under it (another mount's start-up, a lifecycle
        // rule): its data did not reach the bucket, which is an I/O error, not a missing file.
        return s3CodeOf(err) === 'NoSuchUpload' ? 'EIO' : 'ENOENT';
      case 'access-denied':
        return 'EACCES';
      case 'invalid-range':
        return 'EINVAL';
      case 'too-large':
        return 'EFBIG';
      case 'changed':
        // Replaced in the bucket since this descriptor opened it: its bytes are gone.
        return 'ESTALE';
      default:
        // Throttling, an unreachable server or a missing bucket, after the client's retries:
        // the data did not move, which POSIX callers understand as an I/O error.
        return 'EIO';
    }
  }
  const code = (err as { code?: unknown })?.code;
  if (typeof code === 'string' && LOCAL_ERRNOS.has(code)) return code as ErrnoName;
  return 'EIO';
}
