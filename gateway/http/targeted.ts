// Targeted cache-control fields (RFC 9213). An origin can speak to one class of cache apart from
// the others: `CDN-Cache-Control` for CDNs, or a field named for one site (`Estuary-Cache-Control`).
// The gateway keeps a target list (--targeted-cache-control, highest priority first); the first
// field on it with a valid, non-empty value replaces Cache-Control and Expires for this cache.
// When none is valid, Cache-Control rules as usual. Pure.
//
// Targeted fields are Structured Field dictionaries (RFC 8941), so "valid" is stricter than for
// Cache-Control: lower-case keys, well-formed items, and the known directives with the types
// Cache-Control gives them. A field that fails is ignored whole, as RFC 9213 §2.1 says, rather
// than half-understood.

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
/** One member: its key, its value (absent means true), and parameters, which are ignored. */
const MEMBER = new RegExp(`^(${KEY})(?:=(${BARE_ITEM}))?${PARAMS}$`);
/** Splits members at commas outside quoted strings. */
const MEMBERS = /(?:"(?:[^"\\]|\\.)*"|[^,"])+/g;

/**
 * The types RFC 9213 §2.1 infers from Cache-Control for the directives this cache acts on. A
 * value of another type (`max-age="60"`, `max-age=60.5`, `no-store=1`) makes the field invalid.
 */
const INTEGER = new Set(['max-age', 's-maxage', 'stale-while-revalidate', 'stale-if-error']);
const FLAG = new Set(['no-store', 'must-revalidate', 'proxy-revalidate', 'public', 'must-understand']);
/** Flags that may instead carry a string of field names. */
const FLAG_OR_FIELDS = new Set(['no-cache', 'private']);

function typeOk(key: string, value: string | undefined): boolean {
  if (INTEGER.has(key)) return value !== undefined && /^\d{1,15}$/.test(value);
  if (FLAG.has(key)) return value === undefined || value === '?1' || value === '?0';
  if (FLAG_OR_FIELDS.has(key)) return value === undefined || value === '?1' || value === '?0' || value[0] === '"';
  return true;
}

/**
 * A well-formed, non-empty Structured Field dictionary (inner lists aside) whose known directives
 * have their expected types, rewritten in Cache-Control syntax (`?1` dropped, `?0` members and
 * parameters left out); undefined when invalid.
 */
export function directivesFromDictionary(text: string): string | undefined {
  const trimmed = text.trim();
  if (trimmed === '' || /,\s*$|^,/.test(trimmed) || /,\s*,/.test(trimmed)) return undefined;
  const out: string[] = [];
  for (const raw of trimmed.match(MEMBERS) ?? []) {
    const m = MEMBER.exec(raw.trim());
    if (!m) return undefined;
    const [, key, value] = m as unknown as [string, string, string | undefined];
    if (!typeOk(key, value)) return undefined;
    if (value === '?0') continue;
    out.push(value === undefined || value === '?1' ? key : `${key}=${value}`);
  }
  return out.join(', ');
}

/** Is `text` a valid targeted field value? */
export function isDictionary(text: string): boolean {
  return directivesFromDictionary(text) !== undefined;
}

/**
 * The directives of the first field of `targets` (lower-case names) that is present and valid,
 * in Cache-Control syntax, or undefined when Cache-Control and Expires govern.
 */
export function targetedDirectives(headers: HeaderMap, targets: readonly string[]): string | undefined {
  for (const name of targets) {
    const v = headers[name];
    if (v === undefined) continue;
    const directives = directivesFromDictionary(typeof v === 'string' ? v : v.join(', '));
    if (directives !== undefined) return directives;
  }
  return undefined;
}
