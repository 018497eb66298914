// Targeted cache-control fields (RFC 9213). An origin can speak to one class of cache apart from
// the others: `CDN-Cache-Control` for CDNs, or a field named for one site (`Estuary-Cache-Control`).
// The gateway keeps a target list (--targeted-cache-control, highest priority first); the first
// field on it with a valid, non-empty value replaces Cache-Control and Expires for this cache.
// When none is valid, Cache-Control rules as usual. Pure.
//
// Targeted fields are Structured Field dictionaries (RFC 8941), so "valid" is stricter than for
// Cache-Control: lower-case keys, well-formed items. A field that does not parse is ignored whole,
// as RFC 9213 §2.1 says, rather than half-understood.

import type { HeaderMap } from './headers.ts';

const KEY = '[a-z*][a-z0-9_\\-.*]*';
const BARE_ITEM = [
  '-?\\d{1,12}\\.\\d{1,3}', // decimal
  '-?\\d{1,15}', // integer
  '"(?:[\\x20\\x21\\x23-\\x5b\\x5d-\\x7e]|\\\\["\\\\])*"', // string
  "[A-Za-z*][!#$%&'*+\\-.^_`|~0-9A-Za-z:/]*", // token
  ':[A-Za-z0-9+/=]*:', // byte sequence
  '\\?[01]', // boolean
].join('|');
const PARAMS = `(?:;\\x20*${KEY}(?:=(?:${BARE_ITEM}))?)*`;
const MEMBER = new RegExp(`^${KEY}(?:=(?:${BARE_ITEM}))?${PARAMS}$`);
/** Splits members at commas outside quoted strings. */
const MEMBERS = /(?:"(?:[^"\\]|\\.)*"|[^,"])+/g;

/** Is `text` a well-formed, non-empty Structured Field dictionary (inner lists aside)? */
export function isDictionary(text: string): boolean {
  const trimmed = text.trim();
  if (trimmed === '' || /,\s*$|^,/.test(trimmed) || /,\s*,/.test(trimmed)) return false;
  const members = trimmed.match(MEMBERS);
  if (!members) return false;
  return members.every((m) => MEMBER.test(m.trim()));
}

/**
 * The value of the first field of `targets` (lower-case names) that is present and valid, or
 * undefined when Cache-Control and Expires govern.
 */
export function targetedDirectives(headers: HeaderMap, targets: readonly string[]): string | undefined {
  for (const name of targets) {
    const v = headers[name];
    if (v === undefined) continue;
    const text = typeof v === 'string' ? v : v.join(', ');
    if (isDictionary(text)) return text;
  }
  return undefined;
}
