// The contract between the filesystem layer and an object store. It knows nothing of files,
// directories or POSIX: keys, byte ranges, user metadata and multipart uploads. Every
// implementation (the S3 client of s3-client.ts, in-memory, fault-injecting, bandwidth-limited)
// passes the same contract suite (test/fuse/s3/contract.ts), so the filesystem layer can be tested
// without a network.

import type { ReadVersion } from './read-version.ts';

/** What a listing says about one object: enough for `ls -l` without a HEAD per entry. */
export interface ObjectInfo {
  readonly key: string;
  readonly size: number;
  readonly etag: string;
  readonly lastModified: Date;
}

/** What a HEAD (or the headers of a GET) says: the listing facts plus user metadata. */
export interface ObjectHead extends ObjectInfo {
  /** User metadata, keys lower-case without the `x-amz-meta-` prefix. */
  readonly metadata: Readonly<Record<string, string>>;
  readonly contentType?: string;
}

export interface ListOptions {
  /** `/` to list one directory level; omit to list a whole subtree. */
  readonly delimiter?: string;
  readonly continuationToken?: string;
  readonly maxKeys?: number;
}

export interface ListPage {
  readonly objects: readonly ObjectInfo[];
  /** Common prefixes (with the delimiter at the end) when a delimiter was given. */
  readonly prefixes: readonly string[];
  readonly nextToken?: string;
}

export interface WriteOptions {
  readonly metadata?: Readonly<Record<string, string>>;
  readonly contentType?: string;
}

/** A byte range, end exclusive. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
  /**
   * The ETag the object must still have (If-Match): a reader of one version never gets bytes of
   * another. Otherwise the read fails with `changed`.
   */
  readonly ifMatch?: string;
  /**
   * The version the reader reads, checked against every answer and completed from the first
   * (read-version.ts): its ETag, or where the store sends none its Last-Modified, and its size.
   * Given, it stands in for `ifMatch`. Otherwise the read fails with `changed`.
   */
  readonly version?: ReadVersion;
}

/** See ObjectClient.getPieces: the next bytes of a body, in order. */
export type OnPiece = (piece: Buffer) => void;

/** A multipart upload that was started and neither completed nor aborted. */
export interface PendingUpload {
  readonly key: string;
  readonly uploadId: string;
  readonly initiated: Date;
}

export interface CompletedPart {
  readonly partNumber: number;
  readonly etag: string;
}

export interface ObjectClient {
  /** Undefined when the key does not exist. */
  head(key: string): Promise<ObjectHead | undefined>;
  /** The object's bytes, or those in `range` (clipped to the object's end). */
  get(key: string, range?: ByteRange): Promise<Buffer>;
  /**
   * The bytes in `range` (clipped to the object's end), handed to `onPiece` as they arrive, in
   * order, in pieces whose lengths add up to the body's; resolves with that length once the last
   * piece is in. The pieces are the caller's: the client never touches them again. Readahead
   * reads this way because assembling each GET's body into one buffer cost a copy of every byte
   * into freshly allocated memory (docs/BENCHMARKING.md, "What each mount costs the machine").
   */
  getPieces(key: string, range: ByteRange, onPiece: OnPiece): Promise<number>;
  /**
   * Gives a piece of getPieces back once nothing will read it again: its memory may then carry
   * the bytes of a later GET (see slab-pool.ts). Optional: a piece never given back is collected.
   */
  releasePiece?(piece: Buffer): void;
  /**
   * The bytes in `range` together with what a HEAD would say (size, ETag, metadata), so opening
   * and starting to read a file costs one round trip instead of two. Empty objects give an empty
   * body. Throws not-found for a missing key.
   */
  getWithHead(key: string, range: ByteRange): Promise<{ body: Buffer; head: ObjectHead }>;
  /**
   * Stores `body`. Neither put() nor uploadPart() holds on to the body once the promise has
   * settled: the caller may overwrite it then (part buffers are pooled, see buffer-pool.ts).
   */
  put(key: string, body: Buffer, options?: WriteOptions): Promise<{ etag: string }>;
  list(prefix: string, options?: ListOptions): Promise<ListPage>;
  /** Deleting a missing key is not an error, as in S3. */
  delete(key: string): Promise<void>;
  deleteMany(keys: readonly string[]): Promise<void>;
  /** Server-side copy of an object up to 5 GiB; `options` given means metadata is replaced. */
  copy(source: string, target: string, options?: WriteOptions): Promise<{ etag: string }>;
  createMultipart(key: string, options?: WriteOptions): Promise<string>;
  uploadPart(key: string, uploadId: string, partNumber: number, body: Buffer): Promise<string>;
  uploadPartCopy(
    key: string,
    uploadId: string,
    partNumber: number,
    source: string,
    range: ByteRange,
  ): Promise<string>;
  completeMultipart(
    key: string,
    uploadId: string,
    parts: readonly CompletedPart[],
  ): Promise<{ etag: string }>;
  /**
   * Rejects when the server does not take the abort (see uploadGone for an upload already gone);
   * resolves on a server that lacks the operation (s3rver).
   */
  abortMultipart(key: string, uploadId: string): Promise<void>;
  /** Unfinished multipart uploads of keys starting with `prefix`; s3rver answers with an error. */
  listUploads(prefix: string): Promise<PendingUpload[]>;
  /**
   * The store's clock, as the Date of its last answer told it (to the second): ages of what the
   * store dates (an upload's Initiated) are measured against it, not against this host's clock.
   */
  storeNow?(): number | undefined;
  /**
   * Resolves when the bucket exists and the credentials may read it, or (for a mount of
   * `prefix`) may list under `prefix`.
   */
  checkBucket(prefix?: string): Promise<void>;
}

/**
 * Why an object operation failed, in the few kinds the filesystem layer treats differently.
 * `retryable` failures have already been retried by the client before reaching the caller.
 */
export type ObjectErrorKind =
  | 'not-found'
  | 'no-such-bucket'
  | 'access-denied'
  | 'throttled'
  | 'unavailable'
  | 'invalid-range'
  | 'too-large'
  /** The object is no longer the version a ranged read asked for (see ByteRange.ifMatch). */
  | 'changed'
  | 'other';

export class ObjectError extends Error {
  readonly kind: ObjectErrorKind;
  readonly key: string | undefined;

  constructor(kind: ObjectErrorKind, message: string, key?: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'ObjectError';
    this.kind = kind;
    this.key = key;
  }
}

export function isObjectError(err: unknown, kind?: ObjectErrorKind): err is ObjectError {
  return err instanceof ObjectError && (kind === undefined || err.kind === kind);
}

/** S3's limits, the same for every implementation so doubles refuse what a server would. */
export const S3_LIMITS = {
  /** Every part but the last must be at least this big. */
  minPartSize: 5 * 2 ** 20,
  maxPartSize: 5 * 2 ** 30,
  maxParts: 10_000,
  /** A single PUT or CopyObject carries at most this much. */
  maxSinglePut: 5 * 2 ** 30,
  maxObjectSize: 5 * 2 ** 40,
  /** Keys are at most 1024 bytes of UTF-8. */
  maxKeyBytes: 1024,
} as const;
