// Response heads built once per stored response: shared only by hits that would build the same.

import { describe, expect, it } from 'vitest';
import type { EntryMeta } from '../../../gateway/cache/entry.ts';
import { flatHeaders, forgetHeaders, hitStatus, wholeHead, withoutRange } from '../../../gateway/proxy/heads.ts';

function meta(headers: Record<string, string | string[]>, size = 4096): EntryMeta {
  return { key: 'k', url: 'http://o/k', status: 200, headers, requestTime: 0, responseTime: 0, size };
}

const pairs = (h: readonly string[]) => Array.from({ length: h.length / 2 }, (_, i) => `${h[2 * i]}: ${h[2 * i + 1]}`);

describe('response heads', () => {
  it('puts the stored headers, Age, Cache-Status and the length in a whole-body head', () => {
    const m = meta({ 'content-type': 'text/plain', 'content-length': '1', age: '9', 'set-x': ['a', 'b'] });
    expect(pairs(wholeHead(m, 3, 'estuary; hit'))).toEqual([
      'content-type: text/plain',
      'set-x: a',
      'set-x: b',
      'accept-ranges: bytes',
      'age: 3',
      'cache-status: estuary; hit',
      'content-length: 4096',
    ]);
  });

  it('hands out the same head while age and Cache-Status stay, and a new one when either changes', () => {
    const m = meta({ etag: '"1"' });
    const a = wholeHead(m, 5, 'estuary; hit; ttl=10');
    expect(wholeHead(m, 5, 'estuary; hit; ttl=10')).toBe(a);
    const older = wholeHead(m, 6, 'estuary; hit; ttl=10');
    expect(older).not.toBe(a);
    expect(pairs(older)).toContain('age: 6');
    const stale = wholeHead(m, 6, 'estuary; hit; ttl=-1; detail=memory-stale');
    expect(pairs(stale)).toContain('cache-status: estuary; hit; ttl=-1; detail=memory-stale');
  });

  it('gives a hit the same Cache-Status while its ttl and detail stay, so its head is reused', () => {
    const m = meta({});
    const s = hitStatus(m, 'estuary', 10, 'memory', false);
    expect(s).toBe('estuary; hit; ttl=10; detail=memory');
    const head = wholeHead(m, 2, s);
    expect(wholeHead(m, 2, hitStatus(m, 'estuary', 10, 'memory', false))).toBe(head);
    expect(hitStatus(m, 'estuary', 9, 'memory', false)).toBe('estuary; hit; ttl=9; detail=memory');
    expect(hitStatus(m, 'estuary', 9, 'memory', true)).toBe('estuary; hit; ttl=9; detail=memory-stale');
    expect(hitStatus(meta({}), 'estuary', 9, 'disk', false)).toBe('estuary; hit; ttl=9; detail=disk');
  });

  it('never answers for another stored response, variant or version', () => {
    const gzip = meta({ 'content-encoding': 'gzip', vary: 'accept-encoding' }, 100);
    const plain = meta({ vary: 'accept-encoding' }, 300);
    const g = wholeHead(gzip, 1, 's');
    const p = wholeHead(plain, 1, 's');
    expect(pairs(g)).toContain('content-encoding: gzip');
    expect(pairs(p)).not.toContain('content-encoding: gzip');
    expect(pairs(p)).toContain('content-length: 300');
    // A revalidation that changed headers stores a new metadata object; forgetting the old one
    // drops what was built for it.
    forgetHeaders(gzip);
    expect(flatHeaders(gzip)).not.toBe(g);
  });

  it('leaves whole-body fields off the head of a range', () => {
    const m = meta({ 'content-range': 'bytes 0-9/10', 'x-amz-checksum-crc32': 'abc', etag: '"1"' });
    expect(pairs(withoutRange(flatHeaders(m)))).toEqual(['etag: "1"', 'accept-ranges: bytes']);
  });
});
