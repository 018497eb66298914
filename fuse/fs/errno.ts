// The one place where failures become errno names. The filesystem layer throws FsError for
// conditions it decides itself (ENOTEMPTY, EISDIR ...) and lets ObjectErrors and local-disk errors
// travel up; toErrno() names them all, and the FUSE adapter turns the name into its number.

import { isObjectError } from '../s3/object-client.ts';

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

/** Local-disk errors (staging files, the cache directory) that keep their own meaning. */
const LOCAL_ERRNOS = new Set<string>(['ENOSPC', 'EDQUOT', 'EACCES', 'EROFS']);

export function toErrno(err: unknown): ErrnoName {
  if (err instanceof FsError) return err.errno;
  if (isObjectError(err)) {
    switch (err.kind) {
      case 'not-found':
        return 'ENOENT';
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
