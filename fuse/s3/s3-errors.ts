// What the mount's S3 client meets — an error answer (s3-replies.ts), a connection that failed
// (http1-pool.ts), an answer that could not be read — as the ObjectError kinds the filesystem
// turns into errno values, and which of them are tried again. Pure: no I/O.
//
// The retry rules are the AWS SDK's standard mode, which the mount used before it had a client of
// its own: up to `maxAttempts` attempts on resets, timeouts, 429 and 500/502/503/504 (a 200 with
// an <Error> body counts as a 503), waiting a random time up to 100 ms × 2^attempt
// (500 ms × 2^attempt when throttled), at most 20 s; and an error whose Date corrected the signing
// clock (http-exchange.ts), as the SDK retries a clockSkewCorrected error.

import { ObjectError, type ObjectErrorKind } from './object-client.ts';

const KIND_BY_CODE: Record<string, ObjectErrorKind> = {
  NoSuchKey: 'not-found',
  NotFound: 'not-found',
  NoSuchUpload: 'not-found',
  NoSuchBucket: 'no-such-bucket',
  AccessDenied: 'access-denied',
  InvalidAccessKeyId: 'access-denied',
  SignatureDoesNotMatch: 'access-denied',
  Forbidden: 'access-denied',
  SlowDown: 'throttled',
  ServiceUnavailable: 'unavailable',
  InvalidRange: 'invalid-range',
  EntityTooLarge: 'too-large',
  PreconditionFailed: 'changed',
};

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'ENETUNREACH',
]);

const RETRIED_STATUSES = new Set([429, 500, 502, 503, 504]);

const statusOf = (err: unknown): number | undefined =>
  (err as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;

/** The HTTP status of the answer behind an error (an ObjectError's cause), when one was answered. */
export const httpStatusOf = (err: unknown): number | undefined => statusOf(err instanceof ObjectError ? err.cause : err);

/** S3's error code behind an error (an ObjectError's cause), such as NoSuchUpload. */
export const s3CodeOf = (err: unknown): string | undefined =>
  ((err instanceof ObjectError ? err.cause : err) as { name?: string } | undefined)?.name;

/** True when the server answered that it lacks the operation (s3rver's 405, a 501). */
export function lacksOperation(err: unknown): boolean {
  const status = httpStatusOf(err);
  return status === 405 || status === 501;
}

/**
 * True when an abort's error says the upload is gone (aborted or completed already): S3's
 * NoSuchUpload, or 'not-found' from a client that answers without HTTP. A bare 404 (a proxy's,
 * a wrong endpoint's) says nothing about the upload.
 */
export function uploadGone(err: unknown): boolean {
  if (!(err instanceof ObjectError) || err.kind !== 'not-found') return false;
  return httpStatusOf(err) === undefined || s3CodeOf(err) === 'NoSuchUpload';
}

export function toObjectError(err: unknown, key?: string): ObjectError {
  if (err instanceof ObjectError) return err;
  const e = err as { name?: string; code?: string; message?: string };
  const status = statusOf(err);
  let kind: ObjectErrorKind = KIND_BY_CODE[e.name ?? ''] ?? 'other';
  if (kind === 'other' && status === 404) kind = 'not-found';
  if (kind === 'other' && status === 403) kind = 'access-denied';
  if (kind === 'other' && status === 503) kind = 'throttled';
  if (kind === 'other' && status === 412) kind = 'changed';
  if (kind === 'other' && (NETWORK_CODES.has(e.code ?? '') || e.name === 'TimeoutError'))
    kind = 'unavailable';
  const what = `${e.name ?? 'Error'}${status ? ` (HTTP ${status})` : ''}: ${e.message ?? String(err)}`;
  return new ObjectError(kind, what, key, err);
}

export function retryable(e: ObjectError): boolean {
  if (e.kind === 'unavailable' || e.kind === 'throttled') return true;
  if ((e.cause as { clockSkewCorrected?: boolean } | undefined)?.clockSkewCorrected) return true;
  const status = statusOf(e.cause);
  return status !== undefined && RETRIED_STATUSES.has(status);
}

/**
 * True when a request may have reached the server although no answer came back: the connection
 * broke or went silent after it was made. A refused connection or an unknown host sent nothing.
 */
export function outcomeUnknown(e: ObjectError): boolean {
  const code = (e.cause as { code?: string } | undefined)?.code;
  return e.kind === 'unavailable' && code !== 'ECONNREFUSED' && code !== 'ENOTFOUND' && code !== 'EHOSTUNREACH';
}

function backoffMs(attempt: number, throttled: boolean): number {
  return Math.floor(Math.min(20_000, Math.random() * 2 ** attempt * (throttled ? 500 : 100)));
}

/**
 * `attempt` until it succeeds, fails with an error that is not retried, or `maxAttempts` are
 * spent; what fails is thrown as an ObjectError. `onRetry` hears each failure that is retried.
 */
export async function withRetries<T>(
  maxAttempts: number,
  key: string | undefined,
  attempt: () => Promise<T>,
  onRetry?: (e: ObjectError) => void,
): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      const e = toObjectError(err, key);
      if (!retryable(e) || n >= maxAttempts) throw e;
      onRetry?.(e);
      await new Promise((r) => setTimeout(r, backoffMs(n, e.kind === 'throttled')));
    }
  }
}
