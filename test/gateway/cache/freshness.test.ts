import { describe, expect, it } from 'vitest';
import type { EntryMeta } from '../../../gateway/cache/entry.ts';
import {
  currentAge,
  freshnessLifetime,
  mayStore,
  notModifiedSelects,
  staleOnErrorLimit,
  usability,
} from '../../../gateway/cache/freshness.ts';
import { parseCacheControl } from '../../../gateway/http/cache-control.ts';

const T0 = Date.parse('2026-11-21T12:00:00Z');
const date = new Date(T0).toUTCString();

function meta(headers: Record<string, string>, status = 200): EntryMeta {
  return {
    key: 'k',
    url: 'http://h/p',
    status,
    headers: { date, ...headers },
    requestTime: T0,
    responseTime: T0,
    size: 1,
  };
}
const GET = { method: 'GET', headers: {} };

describe('mayStore', () => {
  it('stores explicit freshness and heuristically cacheable statuses with a validator', () => {
    expect(mayStore(GET, { status: 200, headers: { 'cache-control': 'max-age=61' } }).store).toBe(true);
    expect(mayStore(GET, { status: 404, headers: { 'last-modified': date } }).store).toBe(true);
    expect(mayStore(GET, { status: 200, headers: {} }).store).toBe(false);
    expect(mayStore(GET, { status: 500, headers: { 'last-modified': date } }).store).toBe(false);
  });
  it('refuses no-store, private, Authorization, Vary: * and unsafe methods', () => {
    const cc = { 'cache-control': 'max-age=60' };
    expect(mayStore(GET, { status: 200, headers: { 'cache-control': 'no-store' } }).reason).toBe('no-store');
    expect(
      mayStore({ method: 'GET', headers: { 'cache-control': 'no-store' } }, { status: 200, headers: cc })
        .store,
    ).toBe(false);
    expect(mayStore(GET, { status: 200, headers: { 'cache-control': 'private, max-age=60' } }).reason).toBe(
      'private',
    );
    expect(
      mayStore({ method: 'GET', headers: { authorization: 'Bearer x' } }, { status: 200, headers: cc })
        .reason,
    ).toBe('authorization');
    expect(mayStore(GET, { status: 200, headers: { ...cc, vary: '*' } }).store).toBe(false);
    expect(mayStore({ method: 'POST', headers: {} }, { status: 200, headers: cc }).store).toBe(false);
  });
});

describe('freshnessLifetime', () => {
  it('uses s-maxage, then max-age exactly (61 s is 61 s), then Expires', () => {
    expect(freshnessLifetime(meta({ 'cache-control': 'max-age=61' }), 86400)).toBe(61);
    expect(freshnessLifetime(meta({ 'cache-control': 'max-age=61, s-maxage=5' }), 86400)).toBe(5);
    expect(freshnessLifetime(meta({ expires: new Date(T0 + 61_000).toUTCString() }), 86400)).toBe(61);
    expect(freshnessLifetime(meta({ expires: '0' }), 86400)).toBe(0);
  });
  it('applies the heuristic only with Last-Modified, capped', () => {
    const lm = new Date(T0 - 100_000_000).toUTCString();
    expect(freshnessLifetime(meta({ 'last-modified': lm }), 86400)).toBe(10_000);
    expect(freshnessLifetime(meta({ 'last-modified': lm }), 600)).toBe(600);
    expect(freshnessLifetime(meta({}), 86400)).toBe(0);
    expect(freshnessLifetime(meta({ 'last-modified': lm }, 302), 86400)).toBe(0);
  });
});

describe('currentAge', () => {
  it('adds the upstream Age, the response delay and the resident time', () => {
    const m = { ...meta({ age: '30' }), requestTime: T0 - 2000 };
    expect(currentAge(m, T0 + 10_000)).toBe(42);
  });
  it('uses the apparent age when the Date lies in the past', () => {
    const m = meta({ date: new Date(T0 - 5000).toUTCString() });
    expect(currentAge(m, T0)).toBe(5);
  });
});

describe('usability', () => {
  const none = parseCacheControl(undefined);
  it('is fresh within the lifetime, stale after', () => {
    const m = meta({ 'cache-control': 'max-age=61' });
    expect(usability(m, none, T0 + 60_000, 86400)).toEqual({ use: 'fresh', ttl: 1 });
    expect(usability(m, none, T0 + 61_000, 86400).use).toBe('revalidate');
  });
  it('follows request directives: max-age, min-fresh, max-stale', () => {
    const m = meta({ 'cache-control': 'max-age=60' });
    expect(usability(m, parseCacheControl('max-age=0'), T0, 86400).use).toBe('revalidate');
    expect(usability(m, parseCacheControl('max-age=10'), T0 + 11_000, 86400).use).toBe('revalidate');
    expect(usability(m, parseCacheControl('min-fresh=30'), T0 + 40_000, 86400).use).toBe('revalidate');
    expect(usability(m, parseCacheControl('max-stale=10'), T0 + 65_000, 86400).use).toBe('stale-ok');
    const strict = meta({ 'cache-control': 'max-age=60, must-revalidate' });
    expect(usability(strict, parseCacheControl('max-stale'), T0 + 65_000, 86400).use).toBe('revalidate');
  });
  it('always revalidates no-cache responses and never immutable ones', () => {
    expect(usability(meta({ 'cache-control': 'no-cache, max-age=60' }), none, T0, 86400).use).toBe(
      'revalidate',
    );
    expect(usability({ ...meta({}), immutable: true }, none, T0 + 1e9, 86400).use).toBe('fresh');
  });
  it('bounds serving stale on error', () => {
    expect(staleOnErrorLimit(meta({ 'cache-control': 'max-age=1' }), 3600)).toBe(3600);
    expect(staleOnErrorLimit(meta({ 'cache-control': 'max-age=1, stale-if-error=7200' }), 3600)).toBe(7200);
    expect(staleOnErrorLimit(meta({ 'cache-control': 'max-age=1, must-revalidate' }), 3600)).toBe(0);
  });
  it('lets an S3 object\'s own metadata shorten, never lengthen, what the operator set', () => {
    const s3 = (cc: string): EntryMeta => ({ ...meta({ 'cache-control': cc }), lifetimeS: 60 });
    const swr = s3('max-age=0, stale-while-revalidate=31536000, stale-if-error=31536000');
    expect(usability(swr, none, T0 + 59_000, 86400).use).toBe('fresh');
    expect(usability(swr, none, T0 + 61_000, 86400).use).toBe('revalidate');
    expect(staleOnErrorLimit(swr, 3600)).toBe(3600);
    expect(staleOnErrorLimit(s3('must-revalidate'), 3600)).toBe(0);
  });
});

describe('notModifiedSelects (RFC 9111 §4.3.4)', () => {
  it('a 304 with the stored strong ETag, or with none, updates the stored response', () => {
    expect(notModifiedSelects({ etag: '"v0"' }, { etag: '"v0"' })).toBe(true);
    expect(notModifiedSelects({ etag: '"v0"' }, { 'cache-control': 'max-age=1' })).toBe(true);
  });

  it('a 304 naming another strong ETag describes another version and updates nothing', () => {
    expect(notModifiedSelects({ etag: '"v0"' }, { etag: '"v1"' })).toBe(false);
    expect(notModifiedSelects({ 'last-modified': 'x' }, { etag: '"v1"' })).toBe(false);
    // A strong validator matches only a strong one.
    expect(notModifiedSelects({ etag: 'W/"v0"' }, { etag: '"v0"' })).toBe(false);
  });

  it('a weak ETag in the 304 is compared weakly', () => {
    expect(notModifiedSelects({ etag: '"v0"' }, { etag: 'W/"v0"' })).toBe(true);
    expect(notModifiedSelects({ etag: 'W/"v0"' }, { etag: 'W/"v0"' })).toBe(true);
    expect(notModifiedSelects({ etag: 'W/"v0"' }, { etag: 'W/"v1"' })).toBe(false);
  });
});
