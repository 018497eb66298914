// Which query parameters an object request may carry, and the query the store is sent. Pure.
//
// The store reads more from an object request's query than its key: s3rver builds the path of
// an upload part from `uploadId` and `partNumber`, and Swift's S3 layer acts on `?delete` (a bulk
// delete of the whole bucket) even when a key is named. A parameter the gateway has not checked
// is therefore a way around the scope check. Every object request's query is held to the
// parameters of the operations the gateway serves, each value to the shape S3 gives it, and the
// store is sent the query rebuilt from what was checked, never the client's bytes.

import { uriEncode } from '../../lib/sigv4.ts';

/** Response-header overrides of GetObject (the store sets the answer's headers from them). */
const RESPONSE_OVERRIDES = [
  'response-cache-control',
  'response-content-disposition',
  'response-content-encoding',
  'response-content-language',
  'response-content-type',
  'response-expires',
];

/** Parameters by method: GetObject/HeadObject (also of a part or version) and ListParts; PutObject,
 * CopyObject, UploadPart(Copy); Create/CompleteMultipartUpload; DeleteObject, AbortMultipartUpload. */
const ALLOWED: Record<string, readonly string[]> = {
  GET: ['x-id', 'versionId', 'partNumber', 'uploadId', 'max-parts', 'part-number-marker', ...RESPONSE_OVERRIDES],
  HEAD: ['x-id', 'versionId', 'partNumber', ...RESPONSE_OVERRIDES],
  PUT: ['x-id', 'partNumber', 'uploadId'],
  POST: ['x-id', 'uploads', 'uploadId'],
  DELETE: ['x-id', 'versionId', 'uploadId'],
};

const DIGITS = /^[0-9]{1,10}$/;
/**
 * Upload and version ids are opaque to clients, but a store may use them as a path: no
 * separator, no percent sign (a second decoding), and not a dot segment on its own. AWS's ids
 * are URL-safe base64 and dots; Swift's and MinIO's fit too.
 */
const OPAQUE_ID = /^[A-Za-z0-9._~+=-]{1,1024}$/;

/** A refusal and the S3 error code it is answered with. */
export interface QueryProblem {
  readonly code: 'AccessDenied' | 'InvalidArgument' | 'NotImplemented';
  readonly message: string;
}

function valueProblem(name: string, value: string): QueryProblem | undefined {
  const invalid = (message: string): QueryProblem => ({ code: 'InvalidArgument', message });
  switch (name) {
    case 'partNumber': {
      const n = Number(value);
      return DIGITS.test(value) && n >= 1 && n <= 10_000 ? undefined : invalid('partNumber must be a whole number from 1 to 10000');
    }
    case 'max-parts':
    case 'part-number-marker':
      return DIGITS.test(value) ? undefined : invalid(`${name} must be a whole number`);
    case 'uploadId':
    case 'versionId':
      return OPAQUE_ID.test(value) && value !== '.' && value !== '..'
        ? undefined
        : { code: 'AccessDenied', message: `${name} must be an id as the store issued it (letters, digits, and . _ ~ + = -)` };
    case 'uploads':
      return value === '' ? undefined : invalid('uploads takes no value');
    default:
      return undefined;
  }
}

/** Why this object request's query is refused, or undefined when every parameter is served. */
export function objectQueryProblem(method: string, params: ReadonlyMap<string, string>): QueryProblem | undefined {
  const allowed = ALLOWED[method] ?? [];
  for (const [name, value] of params) {
    if (!allowed.includes(name)) {
      return { code: 'NotImplemented', message: `the query parameter "${name}" is not served on ${method} of an object by this gateway` };
    }
    const problem = valueProblem(name, value);
    if (problem) return problem;
  }
  if (method === 'PUT' && params.has('partNumber') !== params.has('uploadId')) {
    return { code: 'InvalidArgument', message: 'an upload part needs both partNumber and uploadId' };
  }
  if (method === 'POST' && params.has('uploads') === params.has('uploadId')) {
    return { code: 'InvalidArgument', message: 'POST on an object takes either uploads or uploadId' };
  }
  return undefined;
}

/** The query the store is sent: the checked parameters in one canonical encoding. */
export function canonicalQuery(params: ReadonlyMap<string, string>): string {
  return [...params]
    .map(([k, v]) => (v === '' && k === 'uploads' ? k : `${uriEncode(k)}=${uriEncode(v)}`))
    .join('&');
}

/**
 * An ACL header that would open an object to others (`x-amz-acl: public-read`, any
 * `x-amz-grant-*`): a job's access would outlast its credential. `private`, which s3fs sends
 * with every upload, changes nothing and passes.
 */
export function aclGrant(headers: Readonly<Record<string, string | string[] | undefined>>): string | undefined {
  for (const [name, value] of Object.entries(headers)) {
    if (name === 'x-amz-acl' && String(value).trim().toLowerCase() !== 'private') return `x-amz-acl: ${String(value)}`;
    if (name.startsWith('x-amz-grant-')) return name;
  }
  return undefined;
}

/**
 * An object read that goes to the store unstored and unshared: with a customer-provided key
 * (SSE-C), whose plaintext only the key's holders may see, and one whose request says
 * `Cache-Control: no-store` (RFC 9111 §5.2.1.5).
 */
export function uncachedRead(headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
  if (Object.keys(headers).some((k) => k.startsWith('x-amz-server-side-encryption-customer-'))) return true;
  return /(^|,)\s*no-store\s*(,|$)/i.test(String(headers['cache-control'] ?? ''));
}
