// Credentials the gateway issues, so that clients (jobs, drones) never hold the site's keys.
//
// They are stateless: the session token carries the claims (access key id, expiry, scopes) and a
// MAC under the gateway's issuer key, and the secret access key is derived from the same claims
// and key. Any gateway process or worker holding the issuer key checks any credential without a
// database, and a restart forgets nothing. The price: a credential cannot be revoked before it
// expires except by changing the issuer key (which revokes all of them). Pure (node:crypto only).

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** The issuer key is an HMAC key: shorter ones are refused as guessable. */
export const MIN_ISSUER_KEY_BYTES = 32;
const TOKEN_PREFIX = 'est1';

export interface Scope {
  /** A bucket name as the gateway serves it (the NAME of --s3 NAME=URL). */
  readonly bucket: string;
  /** Key prefix; '' for the whole bucket. */
  readonly prefix: string;
  readonly write: boolean;
}

export interface Claims {
  readonly accessKeyId: string;
  /** Expiry, epoch seconds. */
  readonly exp: number;
  /** Issued at, epoch seconds. */
  readonly iat: number;
  readonly scopes: readonly Scope[];
}

export interface IssuedCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken: string;
  /** ISO 8601, as AWS tools print credential expiry. */
  readonly expiration: string;
}

function mac(key: string, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}

function secretFor(key: string, payload: string): string {
  return mac(key, `secret\n${payload}`).toString('base64url').slice(0, 40);
}

export function issue(
  issuerKey: string,
  scopes: readonly Scope[],
  ttlMs: number,
  now: number,
): IssuedCredentials {
  const accessKeyId = `ESTU${randomBytes(8).toString('hex').toUpperCase()}`;
  const claims: Claims = {
    accessKeyId,
    iat: Math.floor(now / 1000),
    exp: Math.floor((now + ttlMs) / 1000),
    scopes,
  };
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  const token = `${TOKEN_PREFIX}.${payload}.${mac(issuerKey, `token\n${payload}`).toString('base64url')}`;
  return {
    accessKeyId,
    secretAccessKey: secretFor(issuerKey, payload),
    sessionToken: token,
    expiration: new Date(claims.exp * 1000).toISOString(),
  };
}

export type TokenCheck =
  | { readonly ok: true; readonly claims: Claims; readonly secret: string }
  | { readonly ok: false; readonly why: 'invalid' | 'expired' | 'wrong-key' };

function wellFormed(c: unknown): c is Claims {
  const o = c as Partial<Claims> | null;
  return (
    typeof o === 'object' && o !== null &&
    typeof o.accessKeyId === 'string' &&
    typeof o.exp === 'number' && Number.isFinite(o.exp) &&
    typeof o.iat === 'number' && Number.isFinite(o.iat) &&
    Array.isArray(o.scopes) &&
    o.scopes.every((s: Partial<Scope> | null) => typeof s === 'object' && s !== null && typeof s.bucket === 'string' && typeof s.prefix === 'string' && typeof s.write === 'boolean')
  );
}

/** Checks a session token's MAC, its access key and its expiry; gives the secret to verify with. */
export function checkToken(issuerKey: string, token: string, accessKeyId: string, now: number): TokenCheck {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== TOKEN_PREFIX) return { ok: false, why: 'invalid' };
  const payload = parts[1]!;
  const want = mac(issuerKey, `token\n${payload}`);
  const got = Buffer.from(parts[2]!, 'base64url');
  if (got.length !== want.length || !timingSafeEqual(got, want)) return { ok: false, why: 'invalid' };
  let claims: Claims;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Claims;
  } catch {
    return { ok: false, why: 'invalid' };
  }
  // Only this code mints tokens, but a claim that is not what it says (an `exp` that is no number
  // compares false with everything, so it would never expire) is refused, not interpreted.
  if (!wellFormed(claims)) return { ok: false, why: 'invalid' };
  if (claims.accessKeyId !== accessKeyId) return { ok: false, why: 'wrong-key' };
  if (now >= claims.exp * 1000) return { ok: false, why: 'expired' };
  return { ok: true, claims, secret: secretFor(issuerKey, payload) };
}

/** What an S3 operation needs of a scope. */
export interface Access {
  readonly bucket: string;
  /** The object key, or for a listing the listed prefix. */
  readonly key: string;
  readonly write: boolean;
}

/** True when one of the scopes covers the access. */
export function allowed(scopes: readonly Scope[], a: Access): boolean {
  return scopes.some((s) => s.bucket === a.bucket && a.key.startsWith(s.prefix) && (s.write || !a.write));
}

/** `bucket/prefix` (as given to --prefix) → a scope. */
export function parseScope(text: string, write: boolean): Scope | undefined {
  const m = /^([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(text.trim());
  if (!m) return undefined;
  return { bucket: m[1]!, prefix: m[2] ?? '', write };
}
