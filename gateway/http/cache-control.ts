// Cache-Control parsing (RFC 9111 §5.2). Pure. Directive names are case-insensitive; a directive
// may appear with or without an argument; unknown directives are kept so callers can ignore them.

export type Directives = ReadonlyMap<string, string | true>;

/** Parses one or more Cache-Control header values into a map of lower-case directive -> argument. */
/** Shared answer for the common case of no header: nothing on the hit path allocates for it. */
const NONE: Directives = new Map();

export function parseCacheControl(value: string | readonly string[] | undefined): Directives {
  if (value === undefined) return NONE;
  const out = new Map<string, string | true>();
  const text = Array.isArray(value) ? value.join(',') : (value as string);
  // Quoted arguments may hold commas (no-cache="Set-Cookie, X"): split outside quotes only.
  const re = /\s*([^=,\s]+)\s*(?:=\s*(?:"((?:[^"\\]|\\.)*)"|([^,\s]*)))?\s*(?:,|$)/g;
  for (let m = re.exec(text); m !== null && m[0] !== ''; m = re.exec(text)) {
    const name = m[1]!.toLowerCase();
    if (out.has(name)) continue; // RFC 9111 §4.2.1: with duplicates, the first one counts.
    const arg = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3];
    out.set(name, arg === undefined ? true : arg);
  }
  return out;
}

/** A delta-seconds argument, or undefined when absent or malformed (RFC 9111 §1.2.2). */
export function deltaSeconds(d: Directives, name: string): number | undefined {
  const v = d.get(name);
  if (typeof v !== 'string' || !/^\d+$/.test(v)) return undefined;
  // Values beyond 2^31 are treated as 2^31 (RFC 9111 §1.2.2).
  return Math.min(Number(v), 2 ** 31);
}

/** max-stale may come without a value, meaning "any staleness". */
export function maxStale(d: Directives): number | undefined {
  const v = d.get('max-stale');
  if (v === undefined) return undefined;
  if (v === true) return Number.POSITIVE_INFINITY;
  return deltaSeconds(d, 'max-stale');
}

/**
 * Does a request forbid answers from the cache without asking upstream (RFC 9111 §5.2.1.4)?
 * Pragma: no-cache counts only without Cache-Control (RFC 9111 §5.4).
 */
export function requestNoCache(headers: { [name: string]: string | string[] | undefined }): boolean {
  const cc = headers['cache-control'];
  if (cc !== undefined) return parseCacheControl(cc).has('no-cache');
  const pragma = headers.pragma;
  return pragma !== undefined && /no-cache/i.test(Array.isArray(pragma) ? pragma.join(',') : pragma);
}
