// Heartbeat authentication: an HMAC-SHA256 over the exact body bytes, carried in AMQP message
// headers so the body stays a plain Shoal heartbeat. Signing the bytes (not a re-serialisation)
// means sender and receiver never have to agree on JSON canonical form.
//
// A key is either shared (`SECRET`, key id "shared") or per site (`SITE=SECRET`): with a per-site
// key the heartbeat must also claim that site, so one site's key cannot advertise for another.

import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-estuary-signature';
export const KEY_ID_HEADER = 'x-estuary-key-id';
export const SHARED_KEY_ID = 'shared';
const PREFIX = 'sha256=';

export interface HmacKey {
  readonly id: string;
  /** A KeyObject made once: building one per message costs more than the HMAC itself. */
  readonly secret: KeyObject;
}

/**
 * Parses `SECRET` (a shared key) or `ID=SECRET` (a per-site key; a shared secret that itself holds
 * `=` is written `shared=SECRET`). A secret shorter than 16 bytes is refused as guessable.
 */
export function parseHmacKey(text: string): HmacKey {
  const eq = text.indexOf('=');
  const id = eq > 0 ? text.slice(0, eq) : SHARED_KEY_ID;
  const secret = eq > 0 ? text.slice(eq + 1) : text;
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(id)) throw new Error(`key id "${id}" must be letters, digits and -_.`);
  if (Buffer.byteLength(secret) < 16) throw new Error('an HMAC key needs at least 16 characters');
  return { id, secret: createSecretKey(Buffer.from(secret)) };
}

export function sign(body: Uint8Array, key: HmacKey): Record<string, string> {
  const mac = createHmac('sha256', key.secret).update(body).digest('hex');
  return { [SIGNATURE_HEADER]: `${PREFIX}${mac}`, [KEY_ID_HEADER]: key.id };
}

export type VerifyResult =
  | { readonly state: 'signed'; readonly keyId: string }
  | { readonly state: 'unsigned' }
  | { readonly state: 'unknown-key'; readonly keyId: string }
  | { readonly state: 'bad-signature'; readonly keyId: string };

function headerText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (Buffer.isBuffer(v)) return v.toString('utf8');
  return undefined;
}

/** A header's value if the sender set it (not one inherited from Object.prototype). */
function own(headers: Readonly<Record<string, unknown>> | undefined, name: string): unknown {
  return headers && Object.hasOwn(headers, name) ? headers[name] : undefined;
}

export function verify(
  body: Uint8Array,
  headers: Readonly<Record<string, unknown>> | undefined,
  keys: ReadonlyMap<string, HmacKey>,
): VerifyResult {
  // Only a message with no signature header at all is unsigned. A header of another AMQP type
  // (a number, a table, void) is a bad signature: read as "unsigned", it would pass wherever
  // Shoal compatibility accepts unsigned heartbeats.
  const rawSig = own(headers, SIGNATURE_HEADER);
  if (rawSig === undefined) return { state: 'unsigned' };
  const rawKeyId = own(headers, KEY_ID_HEADER);
  const keyId = rawKeyId === undefined ? SHARED_KEY_ID : headerText(rawKeyId);
  const sig = headerText(rawSig);
  if (keyId === undefined) return { state: 'bad-signature', keyId: '(not text)' };
  const key = keys.get(keyId);
  if (!key) return { state: 'unknown-key', keyId };
  if (sig === undefined || !sig.startsWith(PREFIX)) return { state: 'bad-signature', keyId };
  const given = Buffer.from(sig.slice(PREFIX.length), 'hex');
  const want = createHmac('sha256', key.secret).update(body).digest();
  if (given.length !== want.length || !timingSafeEqual(given, want)) return { state: 'bad-signature', keyId };
  return { state: 'signed', keyId };
}
