// Who the fuse scenario compares with whom, and how its figures were taken, in the words the
// report prints above its tables (docs/BENCHMARKING.md says the same at length).

import { CONCURRENCY, PART_BYTES } from '../s3.ts';

/** The tool being replaced: every ratio is also given against it, as in the KEK paper. */
export const BASELINE_PEER = 's3fs';
/** The SDK alone, drawn as a reference line; a yardstick, not a bound. */
export const REFERENCE_PEER = 'sdk-alone';

/**
 * What the figures include, one sentence each; `cachesDropped` is false without root, and
 * `metadata` false when --cases left the metadata suite out.
 */
export const fuseMethod = (cachesDropped: boolean, metadata: boolean): string[] => [
  'cp up: time of `cp -r` into a fresh mount plus the unmount, so it ends when the data is in S3; then every object size is checked in the bucket.',
  'cp down: time of `cp -r` out of a fresh mount (the unmount not counted); every file\'s SHA-256 is checked against the source.',
  cachesDropped
    ? 'The page cache is dropped (`echo 3 > /proc/sys/vm/drop_caches`) before every mount, so downloads come from S3, not from memory.'
    : 'The page cache could NOT be dropped (needs root): downloads may have been served from memory.',
  'MB/s is dataset bytes (10^6) over that time. CPU s/GB and MB are the mount process\'s CPU time (user + system) per GB and its peak resident memory, over its whole life.',
  `${REFERENCE_PEER} is the reference: @aws-sdk/client-s3 alone moving the same files (${CONCURRENCY} requests in flight, ${PART_BYTES / 2 ** 20} MiB parts), no filesystem. Not a limit: a mount that overlaps files can beat it. Its CPU s/GB is the bench process's own over the copy (Node's HTTP stack and the SDK, plus reading or writing the local files, which for a mount is cp's work); it has no memory row.`,
  ...(metadata
    ? [
        "Metadata suite: goofys's steps on a fresh mount after dropping the page cache; each time includes starting the shell, ls or find.",
      ]
    : []),
];
