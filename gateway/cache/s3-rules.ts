// What the cache keeps of an S3 object fetched through the S3 endpoint. The request was
// authorised by the gateway itself and the object is revalidated by ETag on a fixed interval, so
// RFC 9111's rules for shared caches give way to a few of S3's own. Pure.

import { listItems } from '../http/headers.ts';

/** Response headers S3 sends with an object encrypted with a customer-provided key (SSE-C). */
const SSE_C_ANSWER = 'x-amz-server-side-encryption-customer-algorithm';

/**
 * Whether an S3 object's answer may be stored: a 200 with a Content-Length and without
 * `no-store` in its Cache-Control metadata, and never an SSE-C object, whose plaintext only the
 * key's holders may see (the endpoint passes SSE-C reads through; this keeps a store that answers
 * one anyway out too).
 * `storable` says the status is one to store (a block's 206 is checked by the caller).
 */
export function s3Decision(
  status: number,
  headers: Record<string, string | string[]>,
  storable = status === 200,
): { store: boolean; reason?: string } {
  if (!storable) return { store: false, reason: 's3-status' };
  // Every S3 store sends an object's length; without it a body cut short (chunked, or ended by
  // a dropped connection) cannot be told from the whole object.
  if (!/^\d+$/.test(String(headers['content-length'] ?? ''))) return { store: false, reason: 'no-length' };
  if (headers[SSE_C_ANSWER] !== undefined) return { store: false, reason: 'sse-c' };
  if (/(^|,)\s*no-store\b/i.test(String(headers['cache-control'] ?? ''))) return { store: false, reason: 'no-store' };
  return { store: true };
}

/**
 * The Vary an S3 object is stored under: the store's own, less Accept-Encoding. S3 never codes an
 * object for the transfer (Content-Encoding is metadata set at upload) and the fill asks without
 * Accept-Encoding (s3/endpoint.ts), so the bytes are the same for every client; MinIO's
 * `Vary: Origin, Accept-Encoding` would otherwise store one copy per client library (boto3 sends
 * `Accept-Encoding: identity`, the JavaScript SDK none). Origin stays: a store's CORS headers
 * depend on it.
 */
export function s3Vary(vary: string | string[] | undefined): string | undefined {
  const kept = listItems(vary).filter((n) => n.toLowerCase() !== 'accept-encoding');
  return kept.length > 0 ? kept.join(', ') : undefined;
}
