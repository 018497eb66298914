// Aligned blocks: which blocks cover a range, their keys, and which answers count as a block.

import { describe, expect, it } from 'vitest';
import { blockKey, blocksPrefix, blockRange, blockSpan, isBlockOf, rangeHeaders } from '../../../gateway/cache/block.ts';

const MiB = 1024 * 1024;
const v = { etag: '"abc"', size: 5 * MiB + 7, headers: { etag: '"abc"', 'content-length': String(5 * MiB + 7), 'content-type': 'x/y' }, at: 0 };

describe('aligned blocks', () => {
  it('covers a range with the blocks it touches, the last one short', () => {
    expect(blockSpan(0, 0, MiB)).toEqual({ first: 0, last: 0 });
    expect(blockSpan(MiB - 1, MiB, MiB)).toEqual({ first: 0, last: 1 });
    expect(blockSpan(5 * MiB, 5 * MiB + 6, MiB)).toEqual({ first: 5, last: 5 });
    expect(blockRange(5, MiB, v.size)).toEqual({ start: 5 * MiB, end: 5 * MiB + 6 });
    expect(blockRange(1, MiB, v.size)).toEqual({ start: MiB, end: 2 * MiB - 1 });
  });

  it('keys a block by object, ETag and index', () => {
    expect(blockKey('s3://b/k', '"abc"', 3)).not.toBe(blockKey('s3://b/k', '"abd"', 3));
    expect(blockKey('s3://b/k', '"abc"', 3).startsWith('s3://b/k')).toBe(true);
  });

  it('names every block of an object, of any version, by one prefix that no other object shares', () => {
    for (const k of [blockKey('s3://b/k', '"abc"', 0), blockKey('s3://b/k', '"new"', 12)]) expect(k.startsWith(blocksPrefix('s3://b/k'))).toBe(true);
    expect(blockKey('s3://b/k2', '"abc"', 0).startsWith(blocksPrefix('s3://b/k'))).toBe(false);
    expect(blockKey('s3://b/k/x', '"abc"', 0).startsWith(blocksPrefix('s3://b/k'))).toBe(false);
  });

  it('accepts only a 206 of this very range and version', () => {
    const r = { start: MiB, end: 2 * MiB - 1 };
    const ok = { etag: '"abc"', 'content-range': `bytes ${MiB}-${2 * MiB - 1}/${v.size}` };
    expect(isBlockOf(206, ok, v, r)).toBe(true);
    expect(isBlockOf(200, ok, v, r)).toBe(false);
    expect(isBlockOf(206, { ...ok, etag: '"new"' }, v, r)).toBe(false);
    expect(isBlockOf(206, { ...ok, 'content-range': `bytes ${MiB}-${2 * MiB - 1}/${v.size + 1}` }, v, r)).toBe(false);
    expect(isBlockOf(206, { etag: '"abc"' }, v, r)).toBe(false);
  });

  it('describes the range sent to the client, not the stored length', () => {
    const h = rangeHeaders(v, 10, 19, 'estuary; hit; detail=blocks');
    const m = new Map<string, string>();
    for (let i = 0; i < h.length; i += 2) m.set(h[i]!, h[i + 1]!);
    expect(m.get('content-length')).toBe('10');
    expect(m.get('content-range')).toBe(`bytes 10-19/${v.size}`);
    expect(m.get('content-type')).toBe('x/y');
  });
});
