// Response heads built from stored responses. A stored response's own headers become a flat
// [name, value, ...] list once per entry; a whole-body hit's complete head (those headers, Age,
// Cache-Status, Content-Length) is built once per entry and second and handed to every hit in
// that second, so a hot small object costs no header assembly per request.
//
// Both are keyed by the entry's metadata object. Each stored version, each Vary variant and each
// revalidation that changed headers has its own metadata object, so nothing built for one can
// answer another; what differs per client (Date, Connection) is added by node:http per response.

import type { EntryMeta } from '../cache/entry.ts';
import { wholeBodyOnly } from '../http/partial.ts';

interface Heads {
  /** The stored headers without Content-Length, Age and Accept-Ranges, plus `accept-ranges: bytes`. */
  readonly flat: string[];
  /** The last whole-body head built, and what it was built for. */
  whole?: { readonly age: number; readonly cacheStatus: string; readonly headers: string[] };
  /** The last hit's Cache-Status, and what it was built for. */
  hit?: { readonly ttl: number; readonly detail: string; readonly text: string };
}

const byMeta = new WeakMap<EntryMeta, Heads>();

function headsOf(meta: EntryMeta): Heads {
  let h = byMeta.get(meta);
  if (!h) {
    const flat: string[] = [];
    for (const [k, v] of Object.entries(meta.headers)) {
      if (k === 'content-length' || k === 'age' || k === 'accept-ranges') continue;
      if (Array.isArray(v)) for (const x of v) flat.push(k, x);
      else flat.push(k, v);
    }
    flat.push('accept-ranges', 'bytes');
    h = { flat };
    byMeta.set(meta, h);
  }
  return h;
}

/** Stored headers as a flat [name, value, ...] list, computed once per entry. */
export function flatHeaders(meta: EntryMeta): string[] {
  return headsOf(meta).flat;
}

/**
 * The head of a whole-body answer (GET or HEAD, no range, no 304): reused while the age in
 * seconds and the Cache-Status are those it was built with. Callers must not change it.
 */
export function wholeHead(meta: EntryMeta, age: number, cacheStatus: string): readonly string[] {
  const h = headsOf(meta);
  const w = h.whole;
  if (w && w.age === age && w.cacheStatus === cacheStatus) return w.headers;
  const headers = [...h.flat, 'age', String(age), 'cache-status', cacheStatus, 'content-length', String(meta.size)];
  h.whole = { age, cacheStatus, headers };
  return headers;
}

/** Cache-Status details of a hit, by tier and staleness: constants, so hitStatus knows them by identity. */
const DETAIL = { memory: '; detail=memory', disk: '; detail=disk' } as const;
const STALE_DETAIL = { memory: '; detail=memory-stale', disk: '; detail=disk-stale' } as const;

/**
 * The Cache-Status of a hit on `meta` with `ttl` seconds left: the same string while the ttl and
 * detail stay, so wholeHead knows its head by identity instead of comparing a string built afresh
 * for every request.
 */
export function hitStatus(meta: EntryMeta, name: string, ttl: number, tier: 'memory' | 'disk', stale: boolean): string {
  const h = headsOf(meta);
  const detail = (stale ? STALE_DETAIL : DETAIL)[tier];
  const last = h.hit;
  if (last && last.ttl === ttl && last.detail === detail) return last.text;
  const text = `${name}; hit; ttl=${ttl}${detail}`;
  h.hit = { ttl, detail, text };
  return text;
}

/**
 * A range cut from the body: the stored Content-Range (RFC 9110 §14.4) gives way to the range's
 * own, and digests of the whole body (S3's x-amz-checksum-*) are left off (http/partial.ts).
 */
export function withoutRange(flat: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < flat.length; i += 2) if (!wholeBodyOnly(flat[i]!)) out.push(flat[i]!, flat[i + 1]!);
  return out;
}

/** Drops what was built for `meta` (its headers are about to be replaced). */
export function forgetHeaders(meta: EntryMeta): void {
  byMeta.delete(meta);
}
