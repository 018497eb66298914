// Which response headers a shared cache keeps (RFC 9111 §5.2.2.4, §5.2.2.7). Pure.
//
// `no-cache="Set-Cookie"` and `private="X-User"` name header fields rather than the whole
// response: the rest may be stored and reused. The gateway never keeps the named fields, so a
// stored response — and every answer built from it, the first one included, because readers of
// a fill share it — goes out without them. That is the conservative reading: a shared cache must
// not store the private fields at all, and may not reuse the no-cache ones without asking the
// origin, which for one field would cost the whole response's reuse.

import { type Directives, parseCacheControl } from '../http/cache-control.ts';

/** Lower-case names of the fields a qualified no-cache or private directive names. */
export function omittedFields(cc: Directives): string[] {
  const out: string[] = [];
  for (const name of ['no-cache', 'private']) {
    const v = cc.get(name);
    if (typeof v !== 'string') continue;
    for (const f of v.split(',')) {
      const t = f.trim().toLowerCase();
      if (t !== '') out.push(t);
    }
  }
  return out;
}

/** `headers` without the fields its cache directives say a shared cache must not keep. */
export function storedHeaders(
  headers: Record<string, string | string[]>,
  directives: string | string[] | undefined,
): Record<string, string | string[]> {
  const omit = omittedFields(parseCacheControl(directives));
  if (omit.length === 0) return headers;
  const out = { ...headers };
  for (const f of omit) delete out[f];
  return out;
}

/**
 * The head stored of an answer: without the fields its `private=` / `no-cache=` name (RFC 9111
 * §5.2.2), except for an S3 object, whose Cache-Control metadata counts only for no-store
 * (s3-rules.ts): its ETag, which those could name, is what it is revalidated by.
 */
export function keptHeaders(headers: Record<string, string | string[]>, directives: string | undefined, s3: boolean): Record<string, string | string[]> {
  return s3 ? headers : storedHeaders(headers, directives ?? headers['cache-control']);
}

/**
 * The most a stored head may hold, as `name: value\r\n` lines: what the gateway accepts from an
 * origin. 304s merge their fields into the stored head (RFC 9111 §4.3.4), and an origin stamping
 * new fields on each would otherwise grow it past what clients (Node's own limit is the same
 * 16 KiB) can read.
 */
export const MAX_STORED_HEAD = 16 * 1024;

/** The length of `headers` written as `name: value\r\n` lines. */
export function headBytes(headers: Record<string, string | string[]>): number {
  let n = 0;
  for (const [name, value] of Object.entries(headers)) {
    for (const v of Array.isArray(value) ? value : [value]) n += name.length + v.length + 4;
  }
  return n;
}
