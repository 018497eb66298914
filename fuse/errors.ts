// The mount's error catalogue: every code a user can meet, from the command line or in the log.
// Listed in docs/ERRORS.md under `## fuse`. Codes are never reused for another meaning.

import { EstuaryError } from '../lib/errors.ts';

const BAD_INPUT = { exitCode: 2 } as const;

export const fsErrors = {
  badSource: (source: string) =>
    new EstuaryError(
      'ESTUARY_FS_BAD_SOURCE',
      `"${source}" is not BUCKET or BUCKET/PREFIX; bucket names are 3-63 lower-case letters, digits, dots and hyphens`,
      BAD_INPUT,
    ),
  badMountpoint: (path: string, why: string) =>
    new EstuaryError(
      'ESTUARY_FS_MOUNTPOINT',
      `cannot mount on ${path}: ${why}; give an existing, empty directory`,
      BAD_INPUT,
    ),
  noBucket: (bucket: string, endpoint: string) =>
    new EstuaryError(
      'ESTUARY_FS_NO_BUCKET',
      `bucket "${bucket}" does not exist at ${endpoint}; check the name and --endpoint`,
      BAD_INPUT,
    ),
  accessDenied: (bucket: string) =>
    new EstuaryError(
      'ESTUARY_FS_ACCESS_DENIED',
      `access to bucket "${bucket}" was denied; check AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (or the AWS profile) and the bucket policy`,
      BAD_INPUT,
    ),
  noCredentials: () =>
    new EstuaryError(
      'ESTUARY_FS_NO_CREDENTIALS',
      'no S3 credentials found; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE',
      BAD_INPUT,
    ),
  endpointDown: (endpoint: string, reason: string) =>
    new EstuaryError(
      'ESTUARY_FS_ENDPOINT_DOWN',
      `cannot reach the S3 endpoint ${endpoint} (${reason}); check --endpoint and that the server is up`,
    ),
  /** Something answered, but not as S3 does: a web page, a console, a portal, the wrong port. */
  notS3: (endpoint: string, what: string) =>
    new EstuaryError(
      'ESTUARY_FS_NOT_S3',
      `--endpoint ${endpoint} does not answer like S3 (${what}); check its host, port and path`,
      BAD_INPUT,
    ),
  /** The chain ends at a CA Node does not trust: self-signed, or a site's own CA. */
  untrustedCert: (endpoint: string, reason: string) =>
    new EstuaryError(
      'ESTUARY_FS_ENDPOINT_CERT',
      `the TLS certificate of --endpoint ${endpoint} is not trusted (${reason}); if it comes from a private or self-signed CA, set NODE_EXTRA_CA_CERTS to that CA's certificate file (PEM)`,
      BAD_INPUT,
    ),
  badCert: (endpoint: string, reason: string) =>
    new EstuaryError(
      'ESTUARY_FS_ENDPOINT_CERT',
      `the TLS certificate of --endpoint ${endpoint} is refused (${reason}); check that the host name in --endpoint is one the certificate names, and the certificate's dates`,
      BAD_INPUT,
    ),
  /** The path lies at or under the mountpoint (both with symlinks resolved). */
  cacheDirInMount: (path: string, mountpoint: string, given: boolean) =>
    new EstuaryError(
      'ESTUARY_FS_CACHE_DIR',
      `cannot use cache directory ${path}${given ? '' : ' (the default)'}: it is inside the mountpoint ${mountpoint}, where the mount would hide it; give a --cache-dir outside ${mountpoint}`,
      BAD_INPUT,
    ),
  /** A dead FUSE mount (its process is gone) that this user could not unmount. */
  deadMount: (path: string) =>
    new EstuaryError(
      'ESTUARY_FS_MOUNTPOINT',
      `cannot mount on ${path}: a mount whose process died is still there (ENOTCONN, "Transport endpoint is not connected"); unmount it with \`estuary umount --lazy ${path}\` (as its owner or root), then mount again`,
      BAD_INPUT,
    ),
  notEmpty: (path: string, shown: string) =>
    new EstuaryError(
      'ESTUARY_FS_MOUNTPOINT',
      `cannot mount on ${path}: it is not empty (${shown}); give an empty directory, or --allow-non-empty to hide what it holds while mounted`,
      BAD_INPUT,
    ),
  notWritable: (path: string, uid: string) =>
    new EstuaryError(
      'ESTUARY_FS_MOUNTPOINT',
      `cannot mount on ${path}: uid ${uid} may not write to it, and FUSE lets users mount only on directories they may write; use a directory of your own`,
      BAD_INPUT,
    ),
  noFuseDevice: () =>
    new EstuaryError(
      'ESTUARY_FS_NO_FUSE_DEVICE',
      '/dev/fuse does not exist; load the FUSE module (modprobe fuse), or in a container pass the device (docker run --device /dev/fuse --cap-add SYS_ADMIN)',
      BAD_INPUT,
    ),
  /** `device` is how ls shows /dev/fuse, `who` the uid and user name. */
  fusePermission: (device: string, who: string) =>
    new EstuaryError(
      'ESTUARY_FS_FUSE_PERMISSION',
      `${device} cannot be opened by ${who}; mount as root, or let users open it (chmod 0666 /dev/fuse, the usual mode, kept by a udev rule)`,
      BAD_INPUT,
    ),
  fuseGroup: (device: string, who: string, group: string, user: string) =>
    new EstuaryError(
      'ESTUARY_FS_FUSE_PERMISSION',
      `${device} cannot be opened by ${who}, who is not in group ${group}; add the user to it (usermod -aG ${group} ${user}, then log in again), or mount as root`,
      BAD_INPUT,
    ),
  allowOther: () =>
    new EstuaryError(
      'ESTUARY_FS_ALLOW_OTHER',
      '--allow-other is only allowed to users other than root when /etc/fuse.conf has the line user_allow_other; add it (as root), or leave out --allow-other',
      BAD_INPUT,
    ),
  noFusermount: () =>
    new EstuaryError(
      'ESTUARY_FS_NO_FUSERMOUNT',
      'users other than root mount through fusermount, which is not on PATH as a set-uid-root program; install it (Debian/Ubuntu: apt-get install fuse; RHEL: dnf install fuse) or mount as root',
      BAD_INPUT,
    ),
  /** libfuse prints its own reason on stderr (a "fuse:" or "fusermount:" line) and returns no errno. */
  mountFailed: (path: string, reason: string) =>
    new EstuaryError(
      'ESTUARY_FS_MOUNT_FAILED',
      `FUSE mount on ${path} failed: ${reason}; libfuse's own reason is the "fuse:" or "fusermount:" line above`,
    ),
  noLibfuse: () =>
    new EstuaryError(
      'ESTUARY_FS_NO_LIBFUSE',
      'libfuse 2 (libfuse.so.2) is not installed; install it (Debian/Ubuntu: apt-get install fuse; RHEL: dnf install fuse fuse-libs) and retry',
    ),
  journalIdentity: (dir: string, found: string, wanted: string) =>
    new EstuaryError(
      'ESTUARY_FS_JOURNAL_IDENTITY',
      `the write-back journal in ${dir} holds files for ${found}, not for this mount (${wanted}); mount that store with this --cache-dir to upload them, or give this mount another --cache-dir`,
      BAD_INPUT,
    ),
  journalInUse: (dir: string, pid: number) =>
    new EstuaryError(
      'ESTUARY_FS_JOURNAL_IN_USE',
      `the write-back journal ${dir} is in use by ${Number.isNaN(pid) ? 'another mount' : `process ${pid}`}; give each mount its own --cache-dir`,
      BAD_INPUT,
    ),
  cacheDir: (path: string, reason: string) =>
    new EstuaryError(
      'ESTUARY_FS_CACHE_DIR',
      `cannot use cache directory ${path}: ${reason}; give a writable directory with --cache-dir`,
      BAD_INPUT,
    ),
  cacheDirFull: (path: string) =>
    new EstuaryError(
      'ESTUARY_FS_CACHE_DIR',
      `cannot use cache directory ${path}: its file system is full (or the user's quota is); free space there, or give a --cache-dir on another file system`,
      BAD_INPUT,
    ),
  notMounted: (path: string) =>
    new EstuaryError('ESTUARY_FS_NOT_MOUNTED', `${path} is not a mounted filesystem`, BAD_INPUT),
  umountFailed: (path: string, reason: string) =>
    new EstuaryError(
      'ESTUARY_FS_UMOUNT_FAILED',
      `cannot unmount ${path}: ${reason}; close files open under it (see \`fuser -m ${path}\`) or use --lazy`,
    ),
};

/** Codes that only appear in the mount's log, next to the errno the application saw. */
export const FS_LOG_CODES = {
  /** close/fsync answered EIO because the upload failed; the object was not written. */
  uploadFailed: 'ESTUARY_FS_UPLOAD_FAILED',
  /** Unmount gave up waiting for a store that takes no uploads; the journal keeps the files. */
  journalKept: 'ESTUARY_FS_JOURNAL_KEPT',
} as const;
