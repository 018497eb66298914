// How big each part of a multipart upload is. S3 allows 10,000 parts of 5 MiB to 5 GiB, so a fixed
// part size caps the file: 8 MiB parts stop at 78 GiB. Sizes double every 1,000 parts instead, so
// small and medium files get small parts (more of them in flight at once, less memory each) and a
// stream of unknown length can still grow to S3's 5 TiB object limit.

import { S3_LIMITS } from '../s3/object-client.ts';

/**
 * The first part size. Each part is a request the server handles on its own: on Swift's s3api in
 * the site-cloud bench, a 1000 MB cp went from 90–93 MB/s with 8 MiB parts to 100–103 with 16 MiB
 * (s3rver showed no difference).
 */
export const FIRST_PART_SIZE = 16 * 2 ** 20;
/**
 * Parts of one file uploaded at once (`--upload-concurrency`). Each holds a part buffer, so this
 * sets most of what an upload adds to the mount's memory: four 16 MiB parts (and the one being
 * filled) are 80 MiB. Eight were as fast on a local s3rver; over the site-cloud link they were
 * 0.93x as fast on 100 MB files and 1.08x on a 1000 MB one, and held 34-67 MB more at peak
 * (docs/BENCHMARKING.md, "Upload memory and the local copy").
 */
export const PARTS_IN_FLIGHT = 4;
/**
 * Objects up to this size go up in one PUT when memory allows: a multipart upload costs two more
 * round trips (create, complete) and, on some servers, a copy of the parts at completion. In the
 * site-cloud bench (20 ms, 1 Gbit/s, s3rver) cp of 100×10MB went from 40 MB/s to 59–69 MB/s.
 */
export const SINGLE_PUT_LIMIT = 16 * 2 ** 20;
/** Parts per size step. */
export const PARTS_PER_STEP = 1000;

/** Size of part `partNumber` (1-based). */
export function partSize(partNumber: number, first = FIRST_PART_SIZE): number {
  const step = Math.floor((partNumber - 1) / PARTS_PER_STEP);
  return Math.min(S3_LIMITS.maxPartSize, first * 2 ** step);
}

/** The largest object the schedule can write within S3's part count. */
export function maxStreamedSize(first = FIRST_PART_SIZE): number {
  let total = 0;
  for (let n = 1; n <= S3_LIMITS.maxParts; n += PARTS_PER_STEP) total += partSize(n, first) * PARTS_PER_STEP;
  return total;
}

/** Part boundaries for uploading or copying an object of known size, as [start, end) ranges. */
export function partRanges(size: number, first = FIRST_PART_SIZE): { start: number; end: number }[] {
  const ranges: { start: number; end: number }[] = [];
  let start = 0;
  for (let n = 1; start < size; n++) {
    const end = Math.min(size, start + partSize(n, first));
    ranges.push({ start, end });
    start = end;
  }
  return ranges;
}

/**
 * Parts for copying the first `size` bytes of an object into a multipart upload that goes on
 * after them: the upload's schedule, with a short last range joined to the one before it (S3
 * takes a part under 5 MiB only as the last one) and split in two halves if that passes 5 GiB.
 * Empty when `size` is under 5 MiB: then no part can be followed by more.
 */
export function leadingCopyRanges(size: number, first = FIRST_PART_SIZE): { start: number; end: number }[] {
  if (size < S3_LIMITS.minPartSize) return [];
  const ranges = partRanges(size, first);
  const last = ranges.at(-1)!;
  if (ranges.length < 2 || last.end - last.start >= S3_LIMITS.minPartSize) return ranges;
  ranges.pop();
  const prev = ranges.pop()!;
  if (last.end - prev.start <= S3_LIMITS.maxPartSize) return [...ranges, { start: prev.start, end: last.end }];
  const mid = prev.start + Math.floor((last.end - prev.start) / 2);
  return [...ranges, { start: prev.start, end: mid }, { start: mid, end: last.end }];
}
