// What the AWS SDK and the data path (http-exchange.ts) throw, as the ObjectError kinds the
// filesystem turns into errno values.

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

export function toObjectError(err: unknown, key?: string): ObjectError {
  if (err instanceof ObjectError) return err;
  const e = err as {
    name?: string;
    code?: string;
    message?: string;
    $metadata?: { httpStatusCode?: number };
  };
  const status = e.$metadata?.httpStatusCode;
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
