// Unit tests of the store and reuse rules added for RFC 9111 details: field-qualified no-cache and
// private, targeted cache-control fields, stale-while-revalidate, storable statuses.

import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../../lib/config/resolve.ts';
import type { EntryMeta } from '../../../gateway/cache/entry.ts';
import { gatewayOptions } from '../../../gateway/options.ts';
import { freshnessLifetime, mayStore, usability } from '../../../gateway/cache/freshness.ts';
import { omittedFields, storedHeaders } from '../../../gateway/cache/stored-headers.ts';
import { parseCacheControl } from '../../../gateway/http/cache-control.ts';
import { directivesFromDictionary, isDictionary, targetedDirectives } from '../../../gateway/http/targeted.ts';

const T0 = Date.parse('2026-11-21T12:00:00Z');
const date = new Date(T0).toUTCString();
const GET = { method: 'GET', headers: {} };

function meta(headers: Record<string, string>, extra: Partial<EntryMeta> = {}): EntryMeta {
  return {
    key: 'k',
    url: 'http://h/p',
    status: 200,
    headers: { date, ...headers },
    requestTime: T0,
    responseTime: T0,
    size: 1,
    ...extra,
  };
}

describe('field-qualified no-cache and private', () => {
  it('names the fields to leave out, in any case', () => {
    expect(omittedFields(parseCacheControl('no-cache="Set-Cookie, X-A", private="x-b", max-age=5'))).toEqual([
      'set-cookie',
      'x-a',
      'x-b',
    ]);
    expect(omittedFields(parseCacheControl('no-cache, private'))).toEqual([]);
  });
  it('stores the response without those fields', () => {
    const h = { 'cache-control': 'max-age=60, private="X-User"', 'x-user': 'u', 'x-keep': 'k' };
    expect(storedHeaders(h, h['cache-control'])).toEqual({ 'cache-control': h['cache-control'], 'x-keep': 'k' });
    expect(mayStore(GET, { status: 200, headers: h }).store).toBe(true);
    expect(mayStore(GET, { status: 200, headers: { 'cache-control': 'max-age=60, private' } }).store).toBe(false);
    const cookie = { 'cache-control': 'max-age=60, no-cache="set-cookie"', 'set-cookie': 'a=1' };
    expect(mayStore(GET, { status: 200, headers: cookie }).store).toBe(true);
  });
  it('reuses a no-cache="field" response while fresh; bare no-cache always revalidates', () => {
    const now = T0 + 1000;
    expect(usability(meta({ 'cache-control': 'max-age=60, no-cache="x"' }), new Map(), now, 0).use).toBe('fresh');
    expect(usability(meta({ 'cache-control': 'max-age=60, no-cache' }), new Map(), now, 0).use).toBe('revalidate');
  });
  it('counts a missing Date as the time of receipt, an invalid one as no lifetime', () => {
    const exp = new Date(T0 + 60_000).toUTCString();
    expect(freshnessLifetime({ status: 200, headers: { expires: exp }, responseTime: T0 }, 0)).toBe(60);
    expect(freshnessLifetime({ status: 200, headers: { expires: exp, date: 'yesterday' } }, 0)).toBe(0);
  });
});

describe('targeted fields', () => {
  const targets = ['estuary-cache-control', 'cdn-cache-control'];
  it('accepts Structured Field dictionaries only', () => {
    for (const ok of ['max-age=60', 'no-store', 'max-age=60, no-cache="a, b"', 'none', 'x;p=1, y=?1']) {
      expect(isDictionary(ok), ok).toBe(true);
    }
    const wrongType = ['max-age="60"', 'max-age=60.5', 'max-age=-1', 'no-store=1', 'private=tok', 's-maxage'];
    for (const bad of ['', ' ', 'Max-Age=60', 'max-age=60,', ',max-age=1', 'a,,b', 'max-age="x', 'a=b c', ...wrongType]) {
      expect(isDictionary(bad), bad).toBe(false);
    }
  });
  it('reads booleans and drops parameters, so Cache-Control parsing understands the result', () => {
    expect(directivesFromDictionary('max-age=60;x=1, no-store=?0, private=?1, no-cache="a, b"')).toBe(
      'max-age=60, private, no-cache="a, b"',
    );
    expect(directivesFromDictionary('none')).toBe('none');
  });
  it('picks the first valid field of the target list', () => {
    expect(targetedDirectives({ 'cdn-cache-control': 'max-age=5' }, targets)).toBe('max-age=5');
    expect(
      targetedDirectives({ 'estuary-cache-control': 'max-age=1', 'cdn-cache-control': 'max-age=5' }, targets),
    ).toBe('max-age=1');
    expect(targetedDirectives({ 'estuary-cache-control': 'BAD', 'cdn-cache-control': 'max-age=5' }, targets)).toBe(
      'max-age=5',
    );
    expect(targetedDirectives({ 'cache-control': 'max-age=5' }, targets)).toBeUndefined();
  });
  it('replaces Cache-Control and Expires', () => {
    const expired = { expires: new Date(T0 - 1000).toUTCString(), 'cache-control': 'max-age=9' };
    expect(freshnessLifetime({ status: 200, headers: expired, directives: 'max-age=30' }, 0)).toBe(30);
    expect(freshnessLifetime({ status: 200, headers: expired, directives: 'none' }, 0)).toBe(0);
    expect(mayStore(GET, { status: 200, headers: { 'cache-control': 'no-store' }, directives: 'max-age=1' }).store).toBe(
      true,
    );
  });
});

describe('--targeted-cache-control', () => {
  const parse = (v: string) =>
    resolveConfig('gateway', gatewayOptions, { flags: { targetedCacheControl: v }, env: {} }).config
      .targetedCacheControl;
  it('takes field names in any case, none, and refuses Cache-Control and non-tokens', () => {
    expect(parse('Site-CC, CDN-Cache-Control')).toEqual(['site-cc', 'cdn-cache-control']);
    expect(parse('none')).toEqual([]);
    expect(() => parse('cache-control')).toThrow(/Cache-Control already applies/);
    expect(() => parse('bad field')).toThrow(/header field name/);
  });
});

describe('stale-while-revalidate', () => {
  const swr = (cc: string) => meta({ 'cache-control': cc });
  it('applies within the window to requests without their own freshness demands', () => {
    const m = swr('max-age=10, stale-while-revalidate=20');
    expect(usability(m, new Map(), T0 + 5_000, 0).use).toBe('fresh');
    expect(usability(m, new Map(), T0 + 15_000, 0).use).toBe('stale-revalidate');
    expect(usability(m, new Map(), T0 + 31_000, 0).use).toBe('revalidate');
    expect(usability(m, parseCacheControl('max-age=5'), T0 + 15_000, 0).use).toBe('revalidate');
    expect(usability(m, parseCacheControl('min-fresh=1'), T0 + 15_000, 0).use).toBe('revalidate');
    expect(usability(m, parseCacheControl('x-ext'), T0 + 15_000, 0).use).toBe('stale-revalidate');
    expect(usability(m, parseCacheControl('max-stale=1'), T0 + 15_000, 0).use).toBe('stale-revalidate');
    expect(usability(swr('max-age=10, stale-while-revalidate=20, must-revalidate'), new Map(), T0 + 15_000, 0).use).toBe(
      'revalidate',
    );
    expect(usability(swr('max-age=10, stale-while-revalidate=x'), new Map(), T0 + 15_000, 0).use).toBe('revalidate');
  });
});
