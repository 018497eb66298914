import { describe, expect, it } from 'vitest';
import { formatNumber, mbPerSecond, median, speedup, summarize } from '../../bench/stats.ts';

describe('median', () => {
  it('takes the middle of an odd count and the mean of the middle two of an even count', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });
});

describe('summarize', () => {
  it('reports min, max and the spread as a share of the median', () => {
    expect(summarize([90, 100, 110])).toEqual({ n: 3, median: 100, min: 90, max: 110, spreadPct: 20 });
  });
  it('ignores samples that could not be measured', () => {
    expect(summarize([Number.NaN, 10]).n).toBe(1);
    expect(summarize([Number.NaN]).median).toBeNaN();
  });
});

describe('speedup', () => {
  it('reads above 1 as better for both directions of unit', () => {
    expect(speedup(170, 100, true)).toBeCloseTo(1.7);
    expect(speedup(5, 10, false)).toBe(2);
  });
  it('is undefined where a ratio means nothing', () => {
    expect(speedup(0, 10, true)).toBeUndefined();
    expect(speedup(10, Number.NaN, true)).toBeUndefined();
  });
});

describe('mbPerSecond and formatNumber', () => {
  it('uses decimal megabytes like the paper', () => {
    expect(mbPerSecond(1e9, 10)).toBe(100);
    expect(mbPerSecond(1, 0)).toBeNaN();
  });
  it('keeps three significant digits', () => {
    expect(formatNumber(1234.5)).toBe('1,235');
    expect(formatNumber(123.4)).toBe('123');
    expect(formatNumber(12.34)).toBe('12.3');
    expect(formatNumber(1.234)).toBe('1.23');
    expect(formatNumber(0.01234)).toBe('0.012');
    expect(formatNumber(undefined)).toBe('–');
  });
});
