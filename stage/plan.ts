// What a transfer has to do: the pure comparison of a source and a destination listing. A file is
// skipped when the other side already holds identical content (same size and the same SHA-256,
// which `stage out` records on every object it writes as x-amz-meta-sha256; objects written by
// other tools fall back to size plus a single-part ETag, which is the content's MD5). Nothing is
// ever deleted. No I/O here.

export interface Entry {
  /** Path relative to the transfer's root, '/'-separated. */
  readonly rel: string;
  readonly size: number;
  /** Hex SHA-256, when known. */
  readonly sha256?: string;
  /** Hex MD5, when known (local files hashed on demand, single-part ETags). */
  readonly md5?: string;
}

/** `check`: same size on both sides; the executor hashes and calls identical() to decide. */
export type Action =
  | { readonly kind: 'copy'; readonly entry: Entry; readonly why: 'missing' | 'size' }
  | { readonly kind: 'check'; readonly entry: Entry; readonly there: Entry };

/** The MD5 inside a single-part ETag; undefined for multipart (`"…-N"`) or unknown forms. */
export function etagMd5(etag: string | undefined): string | undefined {
  const m = /^"?([0-9a-f]{32})"?$/i.exec(etag ?? '');
  return m ? m[1]!.toLowerCase() : undefined;
}

/**
 * The MD5 of an object's content as its ETag tells it, or undefined where the ETag is no MD5:
 * multipart, and objects encrypted with KMS keys (`aws:kms`, `aws:kms:dsse`) or with the
 * customer's key (SSE-C), whose ETags are 32 hex digits of something else. Objects encrypted with
 * the store's own keys (`AES256`, SSE-S3) keep MD5 ETags. botocore draws the same line.
 */
export function contentMd5(etag: string | undefined, encryption: { sse?: string; sseCustomerAlgorithm?: string }): string | undefined {
  if (encryption.sseCustomerAlgorithm) return undefined;
  if (encryption.sse !== undefined && encryption.sse !== 'AES256') return undefined;
  return etagMd5(etag);
}

/** True when both sides are known to hold the same bytes. */
export function identical(src: Entry, dst: Entry): boolean {
  if (src.size !== dst.size) return false;
  if (src.sha256 && dst.sha256) return src.sha256 === dst.sha256;
  if (src.md5 && dst.md5) return src.md5 === dst.md5;
  return false;
}

export function plan(source: readonly Entry[], destination: ReadonlyMap<string, Entry>): Action[] {
  return source.map((entry) => {
    const there = destination.get(entry.rel);
    if (!there) return { kind: 'copy', entry, why: 'missing' };
    if (there.size !== entry.size) return { kind: 'copy', entry, why: 'size' };
    return { kind: 'check', entry, there };
  });
}

/** `s3://bucket/prefix` → parts; undefined for anything else. */
export function parseS3Url(text: string): { bucket: string; prefix: string } | undefined {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(text);
  if (!m) return undefined;
  const prefix = m[2] ?? '';
  return { bucket: m[1]!, prefix: prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/` };
}

/** Part numbers 1..n and byte ranges for a file of `size` in parts of `partSize`. */
export function parts(size: number, partSize: number): { n: number; start: number; end: number }[] {
  const out: { n: number; start: number; end: number }[] = [];
  for (let start = 0, n = 1; start < size || n === 1; start += partSize, n++) {
    out.push({ n, start, end: Math.min(size, start + partSize) });
    if (size === 0) break;
  }
  return out;
}
