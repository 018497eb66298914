import { describe, expect, it } from 'vitest';
import { deltaSeconds, maxStale, parseCacheControl, requestNoCache } from '../../../gateway/http/cache-control.ts';
import { parseRange } from '../../../gateway/http/range.ts';

describe('parseCacheControl', () => {
  it('reads directives case-insensitively, with and without arguments', () => {
    const d = parseCacheControl('Max-Age=61, no-cache="Set-Cookie, X-A", public');
    expect(d.get('max-age')).toBe('61');
    expect(d.get('no-cache')).toBe('Set-Cookie, X-A');
    expect(d.get('public')).toBe(true);
  });
  it('keeps the first of duplicate directives and joins header lists', () => {
    expect(parseCacheControl(['max-age=5', 'max-age=9']).get('max-age')).toBe('5');
  });
  it('treats malformed delta-seconds as absent and caps huge ones', () => {
    expect(deltaSeconds(parseCacheControl('max-age=abc'), 'max-age')).toBeUndefined();
    expect(deltaSeconds(parseCacheControl('max-age=99999999999'), 'max-age')).toBe(2 ** 31);
  });
  it('reads max-stale with and without a value', () => {
    expect(maxStale(parseCacheControl('max-stale'))).toBe(Number.POSITIVE_INFINITY);
    expect(maxStale(parseCacheControl('max-stale=1'))).toBe(1);
    expect(maxStale(parseCacheControl(''))).toBeUndefined();
  });
});

describe('parseRange', () => {
  it('parses one range, suffixes and open ends', () => {
    expect(parseRange('bytes=0-9', 100)).toEqual({ kind: 'range', start: 0, end: 9 });
    expect(parseRange('bytes=90-', 100)).toEqual({ kind: 'range', start: 90, end: 99 });
    expect(parseRange('bytes=-10', 100)).toEqual({ kind: 'range', start: 90, end: 99 });
    expect(parseRange('bytes=50-500', 100)).toEqual({ kind: 'range', start: 50, end: 99 });
  });
  it('ignores what it does not serve and refuses what cannot be satisfied', () => {
    expect(parseRange('bytes=0-1,5-6', 100).kind).toBe('none');
    expect(parseRange('items=0-1', 100).kind).toBe('none');
    expect(parseRange('bytes=9-2', 100).kind).toBe('none');
    expect(parseRange('bytes=100-', 100).kind).toBe('unsatisfiable');
    expect(parseRange('bytes=-0', 100).kind).toBe('unsatisfiable');
  });
});

describe('requestNoCache', () => {
  it('reads Cache-Control, and Pragma only without it', () => {
    expect(requestNoCache({ 'cache-control': 'max-age=0, no-cache' })).toBe(true);
    expect(requestNoCache({ 'cache-control': 'max-age=0', pragma: 'no-cache' })).toBe(false);
    expect(requestNoCache({ pragma: 'No-Cache' })).toBe(true);
    expect(requestNoCache({})).toBe(false);
  });
});
