// Vary (RFC 9111 §4.1): which stored variant of a URL may answer a request, and under which key
// each variant lives. Pure.
//
// Several variants per URL, as Squid and Varnish keep them. The first response stored for a URL
// sits under the URL's own key and, through its Vary, says which request headers select a
// variant. A request that does not match it is looked up under a variant key made of the URL key,
// the identity of that first entry's file, and a digest of the request's normalised selecting
// headers. Tying variant keys to the first entry means that when the URL's entry is invalidated,
// purged, evicted or replaced by a new 200, every other variant becomes unreachable at once
// (and is evicted in time) without a scan of the cache.
//
// Normalisation makes equivalent requests share a variant. Varnish rewrites Accept-Encoding to
// one coding and Fastly to a canonical list, both before forwarding; the gateway forwards the
// client's header unchanged, so it only folds what cannot change the origin's choice: case and
// white space in the Accept-* fields, the order of Accept-Encoding's codings (their q-values
// rank them, not their order), codings refused with q=0, and the x-gzip/x-compress aliases.

import { createHash } from 'node:crypto';
import { type HeaderMap, joined, listItems } from '../http/headers.ts';

/** Fields whose values are case-insensitive tokens and media ranges (RFC 9110 §12.5). */
const CASE_FREE = new Set(['accept', 'accept-charset', 'accept-encoding', 'accept-language']);
const CODING_ALIASES: Record<string, string> = { 'x-gzip': 'gzip', 'x-compress': 'compress' };

/** Accept-Encoding as its set of acceptable codings, sorted; "identity;q=0" stays: it changes the answer. */
function normaliseAcceptEncoding(text: string): string {
  const out = new Set<string>();
  for (const item of listItems(text)) {
    const [name = '', ...params] = item.toLowerCase().split(';').map((s) => s.trim());
    const q = params.find((p) => /^q\s*=/.test(p));
    const refused = q !== undefined && Number(q.replace(/^q\s*=\s*/, '')) === 0;
    const coding = CODING_ALIASES[name] ?? name;
    if (refused) {
      if (coding === 'identity' || coding === '*') out.add(`${coding};q=0`);
      continue;
    }
    out.add(coding);
  }
  return [...out].sort().join(',');
}

/** The value of request header `name` as the Vary comparison sees it. */
export function normaliseField(name: string, value: string | string[] | undefined): string {
  const text = (joined(value) ?? '').replace(/\s+/g, ' ').trim();
  if (name === 'accept-encoding') return normaliseAcceptEncoding(text);
  const tidy = text.replace(/\s*([,;=])\s*/g, '$1');
  return CASE_FREE.has(name) ? tidy.toLowerCase() : tidy;
}

/** The selecting headers of `req` for a response's Vary, normalised, to store beside it. */
export function varySelection(
  vary: string | string[] | undefined,
  req: HeaderMap,
): Record<string, string> | undefined {
  const names = listItems(vary).map((n) => n.toLowerCase());
  if (names.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const n of names) out[n] = normaliseField(n, req[n]);
  return out;
}

/** Does a stored selection match this request (RFC 9111 §4.1)? */
export function selectionMatches(stored: Record<string, string> | undefined, req: HeaderMap): boolean {
  if (stored === undefined) return true;
  for (const [n, v] of Object.entries(stored)) {
    // Entries stored before normalisation hold raw values: normalise both sides.
    if (normaliseField(n, req[n]) !== normaliseField(n, v)) return false;
  }
  return true;
}

/**
 * The key of the variant `req` selects, given the URL's first entry (its key, the name of its
 * file, and the header names its Vary lists).
 */
export function variantKey(
  base: string,
  firstEntryId: string,
  names: readonly string[],
  req: HeaderMap,
): string {
  const h = createHash('sha256');
  for (const n of [...names].sort()) h.update(`${n}\n${normaliseField(n, req[n])}\n`);
  return `${base}\n${firstEntryId}:${h.digest('hex').slice(0, 32)}`;
}
