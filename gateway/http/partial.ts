// Headers that describe the whole stored body and so must not go out with a range cut from it.
// Content-Range is the stored answer's own; Content-MD5 and S3's x-amz-checksum-* are digests of
// the full object, which a client checks against the bytes it received: on a 206 they would make
// every SDK that validates checksums (the AWS SDKs' default since 2025) reject a correct range.
// S3 itself (and MinIO) sends no x-amz-checksum-* field with a ranged GET. Pure.

const WHOLE_BODY = new Set(['content-range', 'content-md5']);

/** Whether a stored header must be left off a partial (206) answer cut from that body. */
export function wholeBodyOnly(name: string): boolean {
  return WHOLE_BODY.has(name) || name.startsWith('x-amz-checksum-');
}
