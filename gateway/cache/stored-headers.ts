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
