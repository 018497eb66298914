// The mount's error catalogue: every code a user can meet, from the command line or in the log.
// Listed in docs/ERRORS.md under `## fuse`. Codes are never reused for another meaning.

import { type CodeDoc, codeTable, type ErrorsSection, errorsOf } from '../lib/errors.ts';

/** Each code's row in docs/ERRORS.md, in the order listed there. */
export const FS_CODES = {
  ESTUARY_FS_BAD_SOURCE: {
    meaning: 'the first argument is not `BUCKET` or `BUCKET/PREFIX` (exit 2)',
    fix: 'give a valid bucket name, optionally followed by `/` and a key prefix',
  },
  ESTUARY_FS_MOUNTPOINT: {
    meaning: 'the mountpoint does not exist, is not a directory, has a live mount on it, is not empty (libfuse 2 refuses that), or, for a user other than root, may not be written by that user; or a mount whose process died is still there and this user could not unmount it (exit 2). Paths through symlinks are resolved first, as `/proc/mounts` names them',
    fix: 'create an empty directory of your own, unmount what is there (`estuary umount --lazy MOUNTPOINT` for a dead mount), or give `--allow-non-empty` to hide what the directory holds while mounted',
  },
  ESTUARY_FS_NO_FUSE_DEVICE: {
    meaning: '`/dev/fuse` does not exist (exit 2)',
    fix: 'load the module (`modprobe fuse`); in a container, pass the device (`--device /dev/fuse --cap-add SYS_ADMIN`)',
  },
  ESTUARY_FS_FUSE_PERMISSION: {
    meaning: 'the user may not open `/dev/fuse`; the message shows its mode, owner and group, and names the group the user would need (exit 2)',
    fix: 'mount as root; or `chmod 0666 /dev/fuse` (the usual mode; a udev rule keeps it); or, where the device belongs to a group such as `fuse`, `usermod -aG fuse USER` and log in again',
  },
  ESTUARY_FS_ALLOW_OTHER: {
    meaning: '`--allow-other` from a user other than root, while `/etc/fuse.conf` lacks `user_allow_other` (exit 2)',
    fix: 'add the line `user_allow_other` to `/etc/fuse.conf`, or leave out `--allow-other`',
  },
  ESTUARY_FS_NO_FUSERMOUNT: {
    meaning: 'a user other than root mounts through `fusermount`, and there is no set-uid-root `fusermount` (exit 2)',
    fix: 'install the `fuse` package, or mount as root',
  },
  ESTUARY_FS_NO_BUCKET: {
    meaning: 'the endpoint says the bucket does not exist (exit 2)',
    fix: 'check the bucket name and `--endpoint`',
  },
  ESTUARY_FS_ACCESS_DENIED: {
    meaning: 'the endpoint refused the credentials or the bucket policy denies them (exit 2)',
    fix: 'check `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY` or `AWS_PROFILE`, and the policy',
  },
  ESTUARY_FS_WRONG_REGION: {
    meaning: 'the store answered the bucket check that the bucket is in another region than the one the mount signs for (`301` with `x-amz-bucket-region`, or `400` naming the region); the message names both (exit 2)',
    fix: 'give `--region` with the region named (or set `AWS_REGION`)',
  },
  ESTUARY_FS_CLOCK_SKEW: {
    meaning: 'the store refused the bucket check as signed at a time too far from its own (`RequestTimeTooSkewed`), also after the mount set its signing clock by the store\'s `Date`, as the AWS SDK does (exit 2)',
    fix: 'set this machine\'s clock (`timedatectl set-ntp true`, `chronyc tracking`)',
  },
  ESTUARY_FS_STORE_ADDRESS: {
    meaning: 'the region, or an endpoint or switch from the environment or the shared AWS config (`AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, `endpoint_url`, `AWS_USE_FIPS_ENDPOINT`, `AWS_USE_DUALSTACK_ENDPOINT`), cannot be used: not a URL, not a region name, not `true`/`false`, or FIPS/dual-stack together with an endpoint URL; the message names the setting (exit 2)',
    fix: 'correct or unset the setting it names, or give `--endpoint` and `--region`',
  },
  ESTUARY_FS_NO_CREDENTIALS: {
    meaning: 'no credentials anywhere in the AWS chain (exit 2)',
    fix: 'export `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`, or set `AWS_PROFILE`',
  },
  ESTUARY_FS_BAD_CREDENTIALS: {
    meaning: 'credentials were found but cannot be used: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` or `AWS_SESSION_TOKEN` holds a line break, another control character or white space at an end (named in the message); or the profile\'s `credential_process` answered with something that is not valid credentials (not JSON, not Version 1, expired keys: the message gives the AWS SDK\'s reason); or the credential chain gave no keys within `--request-timeout` (a `credential_process` that waits for input or a network; the message names the step) (exit 2)',
    fix: 'remove the stray character (a `.env` file with CRLF line ends leaves one), or fix the profile\'s `credential_process`; or export `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`',
  },
  ESTUARY_FS_ENDPOINT_DOWN: {
    meaning: 'the S3 endpoint did not answer at mount time: the first request to `--endpoint` got no whole answer within 5 s (a port that accepts and never answers, no connection at all, or a status line and headers whose body then trickles; the message says which), or the bucket check failed after `--retries` attempts (exit 1)',
    fix: 'check `--endpoint` and that the server is up',
  },
  ESTUARY_FS_NOT_S3: {
    meaning: '`--endpoint` answered its first request (an unsigned `GET /BUCKET?location`) with success but not with S3\'s XML (`<LocationConstraint>`, or the bucket\'s listing): an HTML or XHTML page, JSON, plain text such as a health check\'s `OK`, or an empty body; or it refused that request with an HTML page (`401`, `403`, `404`) and then refused the signed bucket check too, where S3 refuses in XML. A web console, a portal, a proxy\'s block page, a typo in the port or path (exit 2)',
    fix: 'give the S3 API\'s address: host, port and path',
  },
  ESTUARY_FS_ENDPOINT_REDIRECT: {
    meaning: '`--endpoint` answered its first request with a redirect (`3xx` with a `Location`, not in S3\'s XML) to another address, named in the message; the mount does not follow redirects (exit 2)',
    fix: 'if the address it names is the S3 API, give that as `--endpoint`',
  },
  ESTUARY_FS_ENDPOINT_USERINFO: {
    meaning: '`--endpoint` carries a user name or password (`http://user:password@host`), which S3 never reads: requests are signed with the AWS credentials. The message shows them as `***` (exit 2)',
    fix: 'leave them out of `--endpoint`; give the credentials as `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY` or `AWS_PROFILE`',
  },
  ESTUARY_FS_ENDPOINT_CERT: {
    meaning: 'an `https://` `--endpoint`\'s certificate is refused: issued by a CA Node does not trust (self-signed, a site\'s own CA), or not naming the host, expired or not yet valid (exit 2)',
    fix: 'for a private CA, set `NODE_EXTRA_CA_CERTS` to its certificate file (PEM) in the mount\'s environment; otherwise use the host name the certificate names',
  },
  ESTUARY_FS_CACHE_DIR: {
    meaning: '`--cache-dir` (or the default, `TMPDIR/estuary-UID`, or the `--write-back` journal\'s folder) cannot be created or written, its file system (or the user\'s quota there) is full, or it lies inside the mountpoint, where the mount would hide it (exit 2; nothing is created under the mountpoint). With `--write-back`, also when its `journal` folder is not safe to take or is not a journal: a symlink, another user\'s, writable by other users (or in a `--cache-dir` anyone may write that is not sticky), or holding files the journal did not write (named in the message); nothing in it is then read, uploaded or deleted',
    fix: 'free space there, or give a writable directory outside the mountpoint, on a file system with room, with `--cache-dir`; for a `journal` folder that is refused, give a `--cache-dir` of your own (in a shared `/scratch`, a folder of yours inside it), or move the folder or the files named away',
  },
  ESTUARY_FS_JOURNAL_IDENTITY: {
    meaning: 'the `--write-back` journal in this `--cache-dir` holds files for another endpoint, bucket or prefix (named in the message) (exit 2)',
    fix: 'mount that store with this `--cache-dir` to upload them, or give this mount another `--cache-dir`',
  },
  ESTUARY_FS_JOURNAL_RECORD: {
    meaning: 'a record in the `--write-back` journal (named in the message) cannot be used: it is damaged, it was written by a newer release, or it names a key outside the mount\'s prefix (exit 2; nothing is uploaded or deleted)',
    fix: 'for a newer release\'s record, mount with that release; otherwise move the record and the `.data` file of the same name out of the journal folder (the `.data` holds the file\'s content) and mount again',
  },
  ESTUARY_FS_JOURNAL_IN_USE: {
    meaning: 'another running mount owns the `--write-back` journal in this `--cache-dir`, on this host or in a container sharing the directory (exit 2)',
    fix: 'give each mount its own `--cache-dir`; the lock is the kernel\'s and goes with its process, so a mount that died (`kill -9`, a crash) leaves none behind',
  },
  ESTUARY_FS_MOUNT_FAILED: {
    meaning: 'the FUSE mount failed for a reason none of the checks above foresaw (exit 1)',
    fix: 'libfuse prints its own reason on the line before (`fuse: …` or `fusermount: …`)',
  },
  ESTUARY_FS_NO_LIBFUSE: {
    meaning: 'the FUSE library the mount is built against (libfuse 2, `libfuse.so.2`) is missing (exit 1)',
    fix: 'install it: Debian/Ubuntu `apt-get install fuse`, RHEL/Alma `dnf install fuse fuse-libs`',
  },
  ESTUARY_FS_NOT_MOUNTED: {
    meaning: '`estuary umount` was given a path with nothing mounted on it (exit 2)',
    fix: 'check the path (`grep fuse /proc/mounts`)',
  },
  ESTUARY_FS_UMOUNT_FAILED: {
    meaning: 'the unmount was refused, usually because files are open (exit 1)',
    fix: 'close them (`fuser -m MOUNTPOINT` lists the processes) or use `--lazy`',
  },
  ESTUARY_FS_JOURNAL_KEPT: {
    meaning: 'log only: at unmount (SIGTERM, `estuary umount`) with `--write-back`, the store still refused or stalled uploads after the shutdown deadline (`--shutdown-timeout`); the mount stopped and the files stay in the journal',
    fix: 'mount the same bucket with the same `--cache-dir` (or none) once the store is up: the journal uploads them at start',
  },
  ESTUARY_FS_JOURNAL_LEFT: {
    meaning: 'log only: a mount without `--write-back` found files in the `--write-back` journal of its `--cache-dir` (closed on an earlier mount and not yet uploaded); it neither shows nor uploads them',
    fix: 'mount the store they were written for with `--write-back` and the same `--cache-dir`: the journal uploads them at start; until then the bucket (and this mount) shows what it held before',
  },
  ESTUARY_FS_COPY_DROPPED: {
    meaning: 'log only: the cache disk failed (full, read-only, an I/O error) while a streamed file\'s sent parts were copied to it; the copy is dropped, the stream goes on and is published at `close()`, and a later write out of order, truncate or read of sent bytes of that file gets the disk\'s errno',
    fix: 'look at the logged cause and the cache disk (`dmesg`, free space); point `--cache-dir` at a healthy disk and restart the mount',
  },
  ESTUARY_FS_UPLOAD_FAILED: {
    meaning: 'log only: an upload failed after retries; the application got `EIO` from `close()`/`fsync()` and the object was not written',
    fix: 'look at the logged cause (endpoint down, throttling, permissions) and write the file again',
  },
  ESTUARY_FS_UPLOAD_LEFT: {
    meaning: 'log only: the mount gave up a multipart upload (a removed file whose parts had left, a failed close) and the store did not take its abort, tried for 10 minutes and once more at unmount (within `--shutdown-timeout`); its parts stay stored, and billed',
    fix: 'a mount started with `--abort-uploads-after` aborts it once it is that old; or abort it now: `aws s3api abort-multipart-upload --bucket BUCKET --key KEY --upload-id ID` with the logged key and id',
  },
} satisfies Record<string, CodeDoc>;

const fsError = errorsOf(FS_CODES);

const BAD_INPUT = { exitCode: 2 } as const;

export const fsErrors = {
  badSource: (source: string) =>
    fsError(
      'ESTUARY_FS_BAD_SOURCE',
      `"${source}" is not BUCKET or BUCKET/PREFIX; bucket names are 3-63 lower-case letters, digits, dots and hyphens`,
      BAD_INPUT,
    ),
  badMountpoint: (path: string, why: string) =>
    fsError(
      'ESTUARY_FS_MOUNTPOINT',
      `cannot mount on ${path}: ${why}; give an existing, empty directory`,
      BAD_INPUT,
    ),
  noBucket: (bucket: string, endpoint: string) =>
    fsError(
      'ESTUARY_FS_NO_BUCKET',
      `bucket "${bucket}" does not exist at ${endpoint}; check the name and --endpoint`,
      BAD_INPUT,
    ),
  accessDenied: (bucket: string) =>
    fsError(
      'ESTUARY_FS_ACCESS_DENIED',
      `access to bucket "${bucket}" was denied; check AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (or the AWS profile) and the bucket policy`,
      BAD_INPUT,
    ),
  wrongRegion: (bucket: string, region: string, signedFor: string) =>
    fsError(
      'ESTUARY_FS_WRONG_REGION',
      `bucket "${bucket}" is in region ${region}, and the mount signed for ${signedFor}; give --region ${region}`,
      BAD_INPUT,
    ),
  clockSkew: (endpoint: string) =>
    fsError(
      'ESTUARY_FS_CLOCK_SKEW',
      `the S3 endpoint ${endpoint} refused the requests as signed at a time too far from its own clock (RequestTimeTooSkewed); set this machine's clock (timedatectl set-ntp true)`,
      BAD_INPUT,
    ),
  storeAddress: (why: string) => fsError('ESTUARY_FS_STORE_ADDRESS', why, BAD_INPUT),
  noCredentials: () =>
    fsError(
      'ESTUARY_FS_NO_CREDENTIALS',
      'no S3 credentials found; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE',
      BAD_INPUT,
    ),
  badCredentials: (why: string) => fsError('ESTUARY_FS_BAD_CREDENTIALS', why, BAD_INPUT),
  endpointDown: (endpoint: string, reason: string) =>
    fsError(
      'ESTUARY_FS_ENDPOINT_DOWN',
      `cannot reach the S3 endpoint ${endpoint} (${reason}); check --endpoint and that the server is up`,
    ),
  /** The status line and headers came, but the body not within the probe's deadline. */
  endpointSlow: (endpoint: string, what: string) =>
    fsError(
      'ESTUARY_FS_ENDPOINT_DOWN',
      `the S3 endpoint ${endpoint} answered too slowly to use (${what}); check --endpoint and that the server is up`,
    ),
  /** The endpoint sends the mount elsewhere (`location` as it names it, resolved, user info masked). */
  redirected: (endpoint: string, status: number, location: string) =>
    fsError(
      'ESTUARY_FS_ENDPOINT_REDIRECT',
      `--endpoint ${endpoint} redirects (HTTP ${status}) to ${location}, and the mount does not follow redirects; if that is the S3 API, give its address as --endpoint`,
      BAD_INPUT,
    ),
  /** `endpoint` with the user info already masked. */
  endpointUserinfo: (endpoint: string) =>
    fsError(
      'ESTUARY_FS_ENDPOINT_USERINFO',
      `--endpoint ${endpoint} carries a user name or password, which S3 never reads; leave them out, and give credentials as AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE`,
      BAD_INPUT,
    ),
  /** Something answered, but not as S3 does: a web page, a console, a portal, the wrong port. */
  notS3: (endpoint: string, what: string) =>
    fsError(
      'ESTUARY_FS_NOT_S3',
      `--endpoint ${endpoint} does not answer like S3 (${what}); check its host, port and path`,
      BAD_INPUT,
    ),
  /** The chain ends at a CA Node does not trust: self-signed, or a site's own CA. */
  untrustedCert: (endpoint: string, reason: string) =>
    fsError(
      'ESTUARY_FS_ENDPOINT_CERT',
      `the TLS certificate of --endpoint ${endpoint} is not trusted (${reason}); if it comes from a private or self-signed CA, set NODE_EXTRA_CA_CERTS to that CA's certificate file (PEM)`,
      BAD_INPUT,
    ),
  badCert: (endpoint: string, reason: string) =>
    fsError(
      'ESTUARY_FS_ENDPOINT_CERT',
      `the TLS certificate of --endpoint ${endpoint} is refused (${reason}); check that the host name in --endpoint is one the certificate names, and the certificate's dates`,
      BAD_INPUT,
    ),
  /** The path lies at or under the mountpoint (both with symlinks resolved). */
  cacheDirInMount: (path: string, mountpoint: string, given: boolean) =>
    fsError(
      'ESTUARY_FS_CACHE_DIR',
      `cannot use cache directory ${path}${given ? '' : ' (the default)'}: it is inside the mountpoint ${mountpoint}, where the mount would hide it; give a --cache-dir outside ${mountpoint}`,
      BAD_INPUT,
    ),
  /** A dead FUSE mount (its process is gone) that this user could not unmount. */
  deadMount: (path: string) =>
    fsError(
      'ESTUARY_FS_MOUNTPOINT',
      `cannot mount on ${path}: a mount whose process died is still there (ENOTCONN, "Transport endpoint is not connected"); unmount it with \`estuary umount --lazy ${path}\` (as its owner or root), then mount again`,
      BAD_INPUT,
    ),
  notEmpty: (path: string, shown: string) =>
    fsError(
      'ESTUARY_FS_MOUNTPOINT',
      `cannot mount on ${path}: it is not empty (${shown}); give an empty directory, or --allow-non-empty to hide what it holds while mounted`,
      BAD_INPUT,
    ),
  notWritable: (path: string, uid: string) =>
    fsError(
      'ESTUARY_FS_MOUNTPOINT',
      `cannot mount on ${path}: uid ${uid} may not write to it, and FUSE lets users mount only on directories they may write; use a directory of your own`,
      BAD_INPUT,
    ),
  noFuseDevice: () =>
    fsError(
      'ESTUARY_FS_NO_FUSE_DEVICE',
      '/dev/fuse does not exist; load the FUSE module (modprobe fuse), or in a container pass the device (docker run --device /dev/fuse --cap-add SYS_ADMIN)',
      BAD_INPUT,
    ),
  /** `device` is how ls shows /dev/fuse, `who` the uid and user name. */
  fusePermission: (device: string, who: string) =>
    fsError(
      'ESTUARY_FS_FUSE_PERMISSION',
      `${device} cannot be opened by ${who}; mount as root, or let users open it (chmod 0666 /dev/fuse, the usual mode, kept by a udev rule)`,
      BAD_INPUT,
    ),
  fuseGroup: (device: string, who: string, group: string, user: string) =>
    fsError(
      'ESTUARY_FS_FUSE_PERMISSION',
      `${device} cannot be opened by ${who}, who is not in group ${group}; add the user to it (usermod -aG ${group} ${user}, then log in again), or mount as root`,
      BAD_INPUT,
    ),
  allowOther: () =>
    fsError(
      'ESTUARY_FS_ALLOW_OTHER',
      '--allow-other is only allowed to users other than root when /etc/fuse.conf has the line user_allow_other; add it (as root), or leave out --allow-other',
      BAD_INPUT,
    ),
  noFusermount: () =>
    fsError(
      'ESTUARY_FS_NO_FUSERMOUNT',
      'users other than root mount through fusermount, which is not on PATH as a set-uid-root program; install it (Debian/Ubuntu: apt-get install fuse; RHEL: dnf install fuse) or mount as root',
      BAD_INPUT,
    ),
  /** libfuse prints its own reason on stderr (a "fuse:" or "fusermount:" line) and returns no errno. */
  mountFailed: (path: string, reason: string) =>
    fsError(
      'ESTUARY_FS_MOUNT_FAILED',
      `FUSE mount on ${path} failed: ${reason}; libfuse's own reason is the "fuse:" or "fusermount:" line above`,
    ),
  noLibfuse: () =>
    fsError(
      'ESTUARY_FS_NO_LIBFUSE',
      'libfuse 2 (libfuse.so.2) is not installed; install it (Debian/Ubuntu: apt-get install fuse; RHEL: dnf install fuse fuse-libs) and retry',
    ),
  journalIdentity: (dir: string, found: string, wanted: string) =>
    fsError(
      'ESTUARY_FS_JOURNAL_IDENTITY',
      `the write-back journal in ${dir} holds files for ${found}, not for this mount (${wanted}); mount that store with this --cache-dir to upload them, or give this mount another --cache-dir`,
      BAD_INPUT,
    ),
  journalInUse: (dir: string, pid: number) =>
    fsError(
      'ESTUARY_FS_JOURNAL_IN_USE',
      `the write-back journal ${dir} is in use by ${Number.isNaN(pid) ? 'another mount' : `process ${pid}`}; give each mount its own --cache-dir`,
      BAD_INPUT,
    ),
  cacheDir: (path: string, reason: string) =>
    fsError(
      'ESTUARY_FS_CACHE_DIR',
      `cannot use cache directory ${path}: ${reason}; give a writable directory with --cache-dir`,
      BAD_INPUT,
    ),
  /** The journal's folder under --cache-dir may not be taken: see fs/journal-folder.ts. */
  journalDir: (dir: string, why: string) =>
    fsError(
      'ESTUARY_FS_CACHE_DIR',
      `cannot use ${dir} as the write-back journal: ${why}; give a --cache-dir of your own, or move it away`,
      BAD_INPUT,
    ),
  journalRecord: (path: string, why: string) =>
    fsError(
      'ESTUARY_FS_JOURNAL_RECORD',
      `cannot use the write-back journal record ${path}: ${why}; move it and its .data file out of the journal folder (they hold a file not yet uploaded) and mount again`,
      BAD_INPUT,
    ),
  cacheDirFull: (path: string) =>
    fsError(
      'ESTUARY_FS_CACHE_DIR',
      `cannot use cache directory ${path}: its file system is full (or the user's quota is); free space there, or give a --cache-dir on another file system`,
      BAD_INPUT,
    ),
  notMounted: (path: string) =>
    fsError('ESTUARY_FS_NOT_MOUNTED', `${path} is not a mounted filesystem`, BAD_INPUT),
  umountFailed: (path: string, reason: string) =>
    fsError(
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
  /** A mount without --write-back found files the journal of its --cache-dir has not uploaded. */
  journalLeft: 'ESTUARY_FS_JOURNAL_LEFT',
  /** The cache disk could not take a stream's local copy: the copy is dropped, the stream goes on. */
  copyDropped: 'ESTUARY_FS_COPY_DROPPED',
  /** A given-up multipart upload the store would not abort: left to a later start. */
  uploadLeft: 'ESTUARY_FS_UPLOAD_LEFT',
} as const satisfies Record<string, keyof typeof FS_CODES>;

/** This role's part of docs/ERRORS.md. */
export const fuseErrorsDoc: ErrorsSection = {
  title: 'fuse',
  intro:
    '`estuary mount` and `estuary umount`. Errors at start-up end the command with one line on stderr. Once mounted, failures reach applications as errno values (see docs/SEMANTICS.md, "Refused, and with which errno"), and the ones that mean data did not reach the bucket are also logged with a code.',
  tables: [codeTable(FS_CODES)],
};
