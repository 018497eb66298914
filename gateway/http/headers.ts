// Header helpers shared by the cache rules and the proxy. Pure.

import { parseHttpDate } from './http-date.ts';

export type HeaderMap = Record<string, string | string[] | undefined>;

/** Hop-by-hop headers (RFC 9110 §7.6.1) never travel through a proxy, nor are they stored. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

export function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

export function joined(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v.join(', ') : v;
}

/** Copies end-to-end headers, dropping hop-by-hop ones and those named in Connection. */
export function endToEnd(headers: HeaderMap): Record<string, string | string[]> {
  const named = new Set(
    (joined(headers.connection) ?? '')
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) {
    const name = k.toLowerCase();
    if (v === undefined || HOP_BY_HOP.has(name) || named.has(name)) continue;
    out[name] = v;
  }
  return out;
}

/**
 * An HTTP-date as a millisecond timestamp, or undefined when missing or invalid (gateway/http/
 * http-date.ts). Several lines of a date field are invalid too: which one would be meant?
 */
export function httpDate(v: string | readonly string[] | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') return v.length === 1 ? parseHttpDate(v[0]!) : undefined;
  return parseHttpDate(v);
}

/** Splits a list header (Vary, If-None-Match) into trimmed items. */
export function listItems(v: string | string[] | undefined): string[] {
  return (joined(v) ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
