// The version a reader reads (fuse/s3/read-version.ts): the ETag where the store sends one, else
// Last-Modified; the size always; what was not known taken from the first answer.

import { describe, expect, it } from 'vitest';
import { isObjectError } from '../../../fuse/s3/object-client.ts';
import { ReadVersion } from '../../../fuse/s3/read-version.ts';

const T = Date.parse('Tue, 24 Nov 2026 12:00:00 GMT');
const changed = (f: () => void) => {
  try {
    f();
  } catch (err) {
    return isObjectError(err, 'changed');
  }
  return false;
};

describe('ReadVersion', () => {
  it('asks for its ETag with If-Match, and refuses an answer with another', () => {
    const v = new ReadVersion({ etag: 'e1', size: 10 });
    expect(v.conditions()).toEqual({ 'if-match': '"e1"' });
    expect(changed(() => v.check('k', { etag: 'e1', lastModified: T + 1000, size: 10 }))).toBe(false);
    expect(changed(() => v.check('k', { etag: 'e2' }))).toBe(true);
  });

  it('without an ETag, learns Last-Modified from the first answer and holds every later one to it', () => {
    const v = new ReadVersion({ etag: '', size: 10 });
    expect(v.conditions()).toEqual({});
    v.check('k', { lastModified: T });
    expect(v.conditions()).toEqual({ 'if-unmodified-since': 'Tue, 24 Nov 2026 12:00:00 GMT' });
    expect(changed(() => v.check('k', { lastModified: T }))).toBe(false);
    expect(changed(() => v.check('k', { lastModified: T + 300_000 }))).toBe(true);
  });

  it('takes the Last-Modified open() saw, and refuses another size', () => {
    const v = new ReadVersion({ lastModified: new Date(T), size: 10 });
    expect(changed(() => v.check('k', { lastModified: T - 1000 }))).toBe(true);
    expect(changed(() => v.check('k', { size: 9 }))).toBe(true);
    expect(changed(() => v.check('k', { size: 10 }))).toBe(false);
  });
});
