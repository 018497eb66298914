import { describe, expect, it } from 'vitest';
import { entityTags, failedPrecondition, ifMatchHolds, ifRangeHolds } from '../../../gateway/http/preconditions.ts';

const STORED = { etag: '"v1"', 'last-modified': 'Tue, 24 Nov 2026 10:00:00 GMT' };
const BEFORE = 'Tue, 24 Nov 2026 09:59:59 GMT';
const AFTER = 'Tue, 24 Nov 2026 10:00:01 GMT';

describe('preconditions against a stored response (RFC 9110 §13.2.2)', () => {
  it('If-Match holds for the stored ETag (strongly), a list holding it, or *', () => {
    expect(failedPrecondition({ 'if-match': '"v1"' }, 200, STORED)).toBeUndefined();
    expect(failedPrecondition({ 'if-match': '"v0", "v1"' }, 200, STORED)).toBeUndefined();
    expect(failedPrecondition({ 'if-match': '*' }, 200, STORED)).toBeUndefined();
    expect(failedPrecondition({ 'if-match': '"v2"' }, 200, STORED)).toBe('If-Match');
    expect(failedPrecondition({ 'if-match': 'W/"v1"' }, 200, STORED)).toBe('If-Match');
    expect(failedPrecondition({ 'if-match': '"v1"' }, 200, { etag: 'W/"v1"' })).toBe('If-Match');
    expect(failedPrecondition({ 'if-match': '"v1"' }, 200, {})).toBe('If-Match');
  });
  it('If-Unmodified-Since fails only for a later Last-Modified, and gives way to If-Match', () => {
    expect(failedPrecondition({ 'if-unmodified-since': BEFORE }, 200, STORED)).toBe('If-Unmodified-Since');
    expect(failedPrecondition({ 'if-unmodified-since': STORED['last-modified'] }, 200, STORED)).toBeUndefined();
    expect(failedPrecondition({ 'if-unmodified-since': AFTER }, 200, STORED)).toBeUndefined();
    expect(failedPrecondition({ 'if-unmodified-since': 'yesterday' }, 200, STORED)).toBeUndefined();
    expect(failedPrecondition({ 'if-unmodified-since': BEFORE }, 200, { etag: '"v1"' })).toBeUndefined();
    // S3: If-Match true and If-Unmodified-Since false is a 200.
    expect(failedPrecondition({ 'if-match': '"v1"', 'if-unmodified-since': BEFORE }, 200, STORED)).toBeUndefined();
  });
  it('only a 200 is compared; no precondition, nothing fails', () => {
    expect(failedPrecondition({ 'if-match': '"v2"' }, 404, STORED)).toBeUndefined();
    expect(failedPrecondition({}, 200, STORED)).toBeUndefined();
  });
});

describe('If-Range (RFC 9110 §13.1.5)', () => {
  it('honours the range for the same strong ETag or exactly the Last-Modified date', () => {
    expect(ifRangeHolds({}, STORED)).toBe(true);
    expect(ifRangeHolds({ 'if-range': '"v1"' }, STORED)).toBe(true);
    expect(ifRangeHolds({ 'if-range': STORED['last-modified'] }, STORED)).toBe(true);
  });
  it('reads a tag sent without its quotes as that tag, as S3 and MinIO do', () => {
    expect(ifRangeHolds({ 'if-range': 'v1' }, STORED)).toBe(true);
    expect(ifRangeHolds({ 'if-range': 'v2' }, STORED)).toBe(false);
  });
  it('sends the whole body for another ETag, a weak one, another date or garbage', () => {
    expect(ifRangeHolds({ 'if-range': '"v2"' }, STORED)).toBe(false);
    expect(ifRangeHolds({ 'if-range': 'W/"v1"' }, { etag: 'W/"v1"' })).toBe(false);
    expect(ifRangeHolds({ 'if-range': AFTER }, STORED)).toBe(false);
    expect(ifRangeHolds({ 'if-range': 'nonsense' }, STORED)).toBe(false);
    expect(ifRangeHolds({ 'if-range': '"v1"' }, {})).toBe(false);
  });
});

describe('entity tags of If-Match and If-None-Match', () => {
  it('keeps a comma inside a quoted tag, reads an unquoted tag as quoted, and finds none in an empty value', () => {
    expect(entityTags('"v1,gz", W/"b" , *')).toEqual(['"v1,gz"', 'W/"b"', '*']);
    expect(entityTags('abc, "d"')).toEqual(['"abc"', '"d"']);
    expect(entityTags('')).toEqual([]);
    expect(entityTags(' , ')).toEqual([]);
  });

  it('holds for no value or an empty one, not for a value of commas only, and compares strongly', () => {
    expect(ifMatchHolds(undefined, '"a"')).toBe(true);
    expect(ifMatchHolds('  ', '"a"')).toBe(true);
    expect(ifMatchHolds(',', '"a"')).toBe(false);
    expect(ifMatchHolds('a', '"a"')).toBe(true);
    expect(ifMatchHolds('"a,b"', '"a,b"')).toBe(true);
    expect(ifMatchHolds('W/"a"', '"a"')).toBe(false);
    expect(ifMatchHolds('"a"', 'W/"a"')).toBe(false);
    expect(ifMatchHolds('"x", *', undefined)).toBe(true);
  });
});
