// AWS Signature Version 4 for S3, both ways: verifying what a client signed with a credential the
// gateway issued, and signing what the gateway sends to the real store and what the mount's data
// path (fuse/s3/data-path.ts) sends to its bucket. One implementation serves all three, so what we
// accept and what we send cannot drift apart. Pure (node:crypto only).
//
// S3's flavour: the canonical URI is the path exactly as sent on the wire (S3 clients encode each
// key once and S3 does not normalise or encode again), the payload hash is whatever the client put
// in x-amz-content-sha256 (a hex SHA-256 or UNSIGNED-PAYLOAD; the store checks the body against a
// hex hash itself), and every x-amz-* header a request carries must be signed.

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export const ALGORITHM = 'AWS4-HMAC-SHA256';
export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';
export const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

export type Headers = Readonly<Record<string, string | readonly string[] | undefined>>;

export interface SignableRequest {
  readonly method: string;
  /** Path as on the wire, already percent-encoded. */
  readonly path: string;
  /** Raw query string without '?', as on the wire. */
  readonly query: string;
  /** Lower-case names. */
  readonly headers: Headers;
}

export interface AuthorizationParts {
  readonly accessKeyId: string;
  readonly date: string;
  readonly region: string;
  readonly service: string;
  readonly signedHeaders: readonly string[];
  readonly signature: string;
}

/** RFC 3986 unreserved characters stay; everything else is %XX with upper-case hex (AWS's rule). */
export function uriEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, '%20'));
  } catch {
    return s;
  }
}

export function canonicalQuery(raw: string): string {
  if (raw === '') return '';
  const pairs = raw
    .split('&')
    .filter((p) => p !== '')
    .map((p) => {
      const i = p.indexOf('=');
      const k = i === -1 ? p : p.slice(0, i);
      const v = i === -1 ? '' : p.slice(i + 1);
      return [uriEncode(decode(k)), uriEncode(decode(v))] as const;
    });
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return pairs.map(([k, v]) => `${k}=${v}`).join('&');
}

/**
 * Node hands a header value over as latin1 text, one character per byte on the wire, and undici
 * writes one out the same way; clients sign the bytes read as UTF-8 (the AWS SDKs send
 * `x-amz-meta-name: café` as C3 A9). A value whose bytes are valid UTF-8 is signed as that text.
 */
function wireText(s: string): string {
  if (!/[\x80-\xff]/.test(s) || /[^\x00-\xff]/.test(s)) return s;
  const bytes = Buffer.from(s, 'latin1');
  const text = bytes.toString('utf8');
  return Buffer.from(text, 'utf8').equals(bytes) ? text : s;
}

/** A header value as it goes on the wire: list values joined, white space folded. */
function wireValue(v: string | readonly string[] | undefined): string {
  const joined = Array.isArray(v) ? v.join(',') : ((v as string | undefined) ?? '');
  return joined.trim().replace(/\s+/g, ' ');
}

function headerValue(v: string | readonly string[] | undefined): string {
  return wireText(wireValue(v));
}

export function canonicalRequest(req: SignableRequest, signedHeaders: readonly string[], payloadHash: string): string {
  const headers = signedHeaders.map((h) => `${h}:${headerValue(req.headers[h])}\n`).join('');
  return [req.method, req.path, canonicalQuery(req.query), headers, signedHeaders.join(';'), payloadHash].join('\n');
}

function hmac(key: Buffer | string, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}

export function signingKey(secret: string, date: string, region: string, service: string): Buffer {
  return hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
}

export function signature(
  req: SignableRequest,
  parts: Omit<AuthorizationParts, 'signature' | 'accessKeyId'>,
  amzDate: string,
  payloadHash: string,
  secret: string,
): string {
  const scope = `${parts.date}/${parts.region}/${parts.service}/aws4_request`;
  const creq = canonicalRequest(req, parts.signedHeaders, payloadHash);
  const toSign = [ALGORITHM, amzDate, scope, createHash('sha256').update(creq, 'utf8').digest('hex')].join('\n');
  return createHmac('sha256', signingKey(secret, parts.date, parts.region, parts.service))
    .update(toSign, 'utf8')
    .digest('hex');
}

/** Parses `AWS4-HMAC-SHA256 Credential=AK/DATE/REGION/SERVICE/aws4_request, SignedHeaders=…, Signature=…`. */
export function parseAuthorization(value: string | undefined): AuthorizationParts | undefined {
  if (!value?.startsWith(`${ALGORITHM} `)) return undefined;
  const fields = new Map<string, string>();
  for (const part of value.slice(ALGORITHM.length + 1).split(',')) {
    const i = part.indexOf('=');
    if (i > 0) fields.set(part.slice(0, i).trim(), part.slice(i + 1).trim());
  }
  const cred = fields.get('Credential')?.split('/');
  const signedHeaders = fields.get('SignedHeaders')?.split(';');
  const sig = fields.get('Signature');
  if (!cred || cred.length !== 5 || cred[4] !== 'aws4_request' || !signedHeaders || !sig) return undefined;
  if (!/^[0-9a-f]{64}$/.test(sig) || !/^\d{8}$/.test(cred[1]!)) return undefined;
  return {
    accessKeyId: cred[0]!,
    date: cred[1]!,
    region: cred[2]!,
    service: cred[3]!,
    signedHeaders,
    signature: sig,
  };
}

/** `20261123T193000Z` → epoch ms, or undefined. */
export function parseAmzDate(v: string | undefined): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(v ?? '');
  if (!m) return undefined;
  const t = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
  return Number.isNaN(t) ? undefined : t;
}

export function formatAmzDate(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

export type VerifyFailure =
  | 'malformed'
  | 'unsigned-header'
  | 'skewed'
  | 'mismatch';

/**
 * Checks a client's signature with `secret`. The caller has parsed `auth` and looked the secret up
 * by its access key. Requires host and x-amz-date among the signed headers, every x-amz-* header
 * signed, and a request time within `maxSkewMs` of `now`.
 */
export function verify(
  req: SignableRequest,
  auth: AuthorizationParts,
  secret: string,
  now: number,
  maxSkewMs: number,
): { ok: true } | { ok: false; why: VerifyFailure } {
  const signed = new Set(auth.signedHeaders);
  if (auth.service !== 's3' || !signed.has('host')) return { ok: false, why: 'malformed' };
  for (const h of Object.keys(req.headers)) {
    if (h.startsWith('x-amz-') && !signed.has(h)) return { ok: false, why: 'unsigned-header' };
  }
  const amzDate = headerValue(req.headers['x-amz-date']);
  const at = parseAmzDate(amzDate);
  if (at === undefined || !amzDate.startsWith(auth.date)) return { ok: false, why: 'malformed' };
  if (Math.abs(now - at) > maxSkewMs) return { ok: false, why: 'skewed' };
  const payload = headerValue(req.headers['x-amz-content-sha256']);
  if (payload === '') return { ok: false, why: 'malformed' };
  const want = Buffer.from(signature(req, auth, amzDate, payload, secret), 'hex');
  const got = Buffer.from(auth.signature, 'hex');
  return want.length === got.length && timingSafeEqual(want, got) ? { ok: true } : { ok: false, why: 'mismatch' };
}

/**
 * Signs a request for the real store: returns the headers to send (the given ones plus host,
 * x-amz-date, x-amz-content-sha256, the session token if any, and Authorization).
 */
export function sign(
  req: SignableRequest & { readonly host: string },
  creds: { readonly accessKeyId: string; readonly secretAccessKey: string; readonly sessionToken?: string },
  region: string,
  payloadHash: string,
  now: number,
): Record<string, string> {
  const amzDate = formatAmzDate(now);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) out[k] = wireValue(v);
  out.host = req.host;
  out['x-amz-date'] = amzDate;
  out['x-amz-content-sha256'] = payloadHash;
  if (creds.sessionToken) out['x-amz-security-token'] = creds.sessionToken;
  const signedHeaders = Object.keys(out).sort();
  const parts = { date: amzDate.slice(0, 8), region, service: 's3', signedHeaders };
  const sig = signature({ ...req, headers: out }, parts, amzDate, payloadHash, creds.secretAccessKey);
  out.authorization =
    `${ALGORITHM} Credential=${creds.accessKeyId}/${parts.date}/${region}/s3/aws4_request, ` +
    `SignedHeaders=${signedHeaders.join(';')}, Signature=${sig}`;
  return out;
}
