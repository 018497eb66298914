// What the data path takes an answer to a GET to carry (fuse/s3/get-answer.ts): a 200 to a ranged
// GET is the whole object only where its length shows it, never the range alone taken for it.

import { describe, expect, it } from 'vitest';
import { answerOf, sizeOf200 } from '../../../fuse/s3/get-answer.ts';
import { ReadVersion } from '../../../fuse/s3/read-version.ts';

const ok200 = (length?: number) => ({ status: 200, headers: length === undefined ? {} : { 'content-length': String(length) } });

describe('a 200 to a ranged GET', () => {
  it('longer than the range: the whole object, the range taken from byte start of it', () => {
    expect(answerOf('k', ok200(5000), { start: 1000, end: 2000 })).toEqual({ skip: 1000, want: 1000, length: 5000, size: 5000 });
  });

  it('from byte 0 and shorter than the range: the whole object either way', () => {
    expect(answerOf('k', ok200(300), { start: 0, end: 1000 })).toEqual({ skip: 0, want: 300, length: 300, size: 300 });
  });

  it('exactly a range from byte 0 long: the right bytes, the size unknown', () => {
    expect(answerOf('k', ok200(1000), { start: 0, end: 1000 })).toMatchObject({ skip: 0, want: 1000, size: undefined });
    expect(sizeOf200({ start: 0, end: 1000 }, 1000)).toBeUndefined();
  });

  it('no longer than a range that starts later: refused (it may be the range alone)', () => {
    expect(() => answerOf('k', ok200(1000), { start: 1000, end: 2000 })).toThrow(/range alone/);
    expect(() => answerOf('k', ok200(), { start: 1000, end: 2000 })).toThrow(/range alone/);
  });

  it('with the size the reader knows: used when as long, refused when not', () => {
    const version = new ReadVersion({ size: 1000 });
    expect(answerOf('k', ok200(1000), { start: 500, end: 800, version })).toEqual({ skip: 500, want: 300, length: 1000, size: 1000 });
    expect(() => answerOf('k', ok200(300), { start: 500, end: 800, version })).toThrow(/range alone/);
    expect(() => answerOf('k', ok200(5000), { start: 500, end: 800, version })).toThrow(/5000 bytes/);
  });
});
