// Aligned blocks of large S3 objects: a range read of an object the cache does not hold fetches
// only the fixed-size blocks that cover the range, each stored as its own cache entry. A block's
// key names the object's ETag, so blocks of two versions of an object can never be served
// together; an answer from the store is only accepted as a block when its status, Content-Range
// and ETag are exactly the ones asked for. Pure.

import { first } from '../http/headers.ts';
import { wholeBodyOnly } from '../http/partial.ts';

/** The version of an object that a block read serves, as its HEAD described it. */
export interface ObjectVersion {
  readonly etag: string;
  readonly size: number;
  /** End-to-end response headers of the HEAD, for the 206 the client gets. */
  readonly headers: Record<string, string | string[]>;
  /** When the store said so (ms); trusted for --s3-revalidate like a cached object. */
  readonly at: number;
}

/** Byte range [start, end] of block `index`. */
export function blockRange(index: number, blockSize: number, size: number): { start: number; end: number } {
  const start = index * blockSize;
  return { start, end: Math.min(size, start + blockSize) - 1 };
}

/** First and last block index covering bytes [start, end]. */
export function blockSpan(start: number, end: number, blockSize: number): { first: number; last: number } {
  return { first: Math.floor(start / blockSize), last: Math.floor(end / blockSize) };
}

/**
 * The cache key of one block. It starts with the object's key, so purging the object's prefix
 * drops its blocks too; a whole-object entry under a key that happens to look like this one is
 * never taken for a block (see isBlockOf).
 */
export function blockKey(objectKey: string, etag: string, index: number): string {
  return `${blocksPrefix(objectKey)}${index};etag=${etag}`;
}

/** What the keys of every block of the object stored under `objectKey` start with, whatever their version. */
export function blocksPrefix(objectKey: string): string {
  return `${objectKey}#estuary-block=`;
}

/** Whether a stored or received response is block `index` of exactly this version. */
export function isBlockOf(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  version: Pick<ObjectVersion, 'etag' | 'size'>,
  range: { start: number; end: number },
): boolean {
  if (status !== 206) return false;
  if (first(headers.etag) !== version.etag) return false;
  return first(headers['content-range']) === `bytes ${range.start}-${range.end}/${version.size}`;
}

/** Headers of the HEAD that do not describe a 206 body cut from the object. */
const NOT_COPIED = new Set(['content-length', 'content-range', 'accept-ranges', 'age', 'cache-status']);

/** Response headers for bytes [start, end] of `version`, as a flat [name, value, ...] list. */
export function rangeHeaders(version: ObjectVersion, start: number, end: number, cacheStatus: string): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(version.headers)) {
    // A store's CORS answer is for the Origin of the request that got it: never another's.
    if (NOT_COPIED.has(k) || wholeBodyOnly(k) || k.startsWith('access-control-')) continue;
    if (Array.isArray(v)) for (const x of v) out.push(k, x);
    else out.push(k, v);
  }
  out.push(
    'accept-ranges', 'bytes',
    'content-range', `bytes ${start}-${end}/${version.size}`,
    'content-length', String(end - start + 1),
    'cache-status', cacheStatus,
  );
  return out;
}
