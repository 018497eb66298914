// The entry format's pure parts: which trailers are valid, and what an entry is counted in memory.

import { describe, expect, it } from 'vitest';
import type { EntryMeta } from '../../../gateway/cache/entry.ts';
import { chargeOf, decodeMeta, encodeTrailer, footprintOf, TRAILER_FIXED } from '../../../gateway/cache/format.ts';

const good: EntryMeta = {
  key: 'reverse://o/x',
  url: 'http://o/x',
  status: 200,
  headers: { etag: '"v1"', 'set-cookie': ['a=1', 'b=2'], 'x-latin1': 'caf\u00e9' },
  requestTime: 1,
  responseTime: 2,
  size: 5,
  vary: { 'accept-encoding': 'gzip' },
};

/** decodeMeta of `meta` as if it were the trailer of a file with a 5-byte body. */
function decode(meta: unknown): EntryMeta | undefined {
  const json = Buffer.from(JSON.stringify(meta), 'utf8');
  return decodeMeta(json, 5 + json.length + TRAILER_FIXED);
}

describe('decodeMeta', () => {
  it('takes what the gateway writes', () => {
    const t = encodeTrailer(good);
    expect(decodeMeta(t.subarray(0, t.length - TRAILER_FIXED), 5 + t.length)).toEqual(good);
  });

  it.each([
    ['no headers', { ...good, headers: undefined }],
    ['headers an array', { ...good, headers: ['a'] }],
    ['a value with CR LF', { ...good, headers: { 'x-o': 'yes\r\nset-cookie: injected=1' } }],
    ['a value with NUL', { ...good, headers: { 'x-o': 'a\0b' } }],
    ['a list with a number', { ...good, headers: { 'set-cookie': ['a', 1] } }],
    ['a field name with a space', { ...good, headers: { 'x o': 'v' } }],
    ['no url', { ...good, url: undefined }],
    ['a status out of range', { ...good, status: 1000 }],
    ['a negative size', { ...good, size: -1 }],
    ['times that are not numbers', { ...good, requestTime: 'now' }],
    ['vary values that are not strings', { ...good, vary: { a: 1 } }],
    ['immutable not a boolean', { ...good, immutable: 'yes' }],
  ])('discards a trailer with %s', (_what, meta) => {
    expect(decode(meta)).toBeUndefined();
  });
});

describe('footprintOf', () => {
  it('counts header fields beyond the first sixteen, so many short fields are charged what they hold', () => {
    const few = footprintOf(good);
    const headers: Record<string, string> = {};
    for (let i = 0; i < 1400; i++) headers[`x-h${i}`] = 'v';
    const many = footprintOf({ ...good, headers });
    const json = Buffer.byteLength(JSON.stringify({ ...good, headers }));
    // V8 holds 60 to 110 bytes per such field beyond its JSON (measured with Node 24).
    expect(many.indexBytes).toBeGreaterThan(json + 1400 * 80);
    expect(chargeOf(many)).toBeGreaterThanOrEqual(4 * many.indexBytes);
    // An ordinary response's few fields cost nothing beyond their JSON and the entry's base.
    expect(few.indexBytes).toBe(Buffer.byteLength(JSON.stringify(good)) + 512);
  });
});
