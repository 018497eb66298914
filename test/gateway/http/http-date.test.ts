import { describe, expect, it } from 'vitest';
import { parseAge } from '../../../gateway/http/age.ts';
import { httpDate } from '../../../gateway/http/headers.ts';
import { fullYear, parseHttpDate } from '../../../gateway/http/http-date.ts';

const T = Date.UTC(1994, 10, 6, 8, 49, 37);
const NOW = Date.UTC(2026, 10, 23);

describe('HTTP-date (RFC 9110 §5.6.7)', () => {
  it('reads the three forms a recipient must accept', () => {
    expect(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT')).toBe(T);
    expect(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', NOW)).toBe(T);
    expect(parseHttpDate('Sun Nov  6 08:49:37 1994')).toBe(T);
    expect(parseHttpDate('Sun Nov 16 08:49:37 1994')).toBe(T + 10 * 86_400_000);
  });
  it('matches names case-insensitively, as a cache should (RFC 9111 §4.2)', () => {
    expect(parseHttpDate('sun, 06 NOV 1994 08:49:37 gmt')).toBe(T);
  });
  it('refuses near misses that Date.parse accepts', () => {
    for (const bad of [
      'Sun, 06 Nov 1994 08:49:37 UTC',
      'Sun, 06 Nov 1994 8:49:37 GMT',
      'Sun, 6 Nov 1994 08:49:37 GMT',
      'Sun 06 Nov 1994 08:49:37 GMT',
      'Sun,  06 Nov 1994 08:49:37 GMT',
      'Sun, 06 Nov 1994 08:49:37 GMT, Mon, 07 Nov 1994 08:49:37 GMT',
      'Sun, 31 Feb 1994 08:49:37 GMT',
      'Sun, 06 Nov 1994 24:00:00 GMT',
      '1994-11-06T08:49:37Z',
      '0',
      '',
    ]) {
      expect(parseHttpDate(bad), bad).toBeUndefined();
    }
  });
  it('treats several lines of a date field as invalid', () => {
    expect(httpDate(['Sun, 06 Nov 1994 08:49:37 GMT', 'Sun, 06 Nov 1994 08:49:37 GMT'])).toBeUndefined();
    expect(httpDate(['Sun, 06 Nov 1994 08:49:37 GMT'])).toBe(T);
  });
  it('puts two-digit years no more than 50 years ahead (the RFC 850 rule)', () => {
    expect(fullYear(94, NOW)).toBe(1994);
    expect(fullYear(76, NOW)).toBe(2076);
    expect(fullYear(77, NOW)).toBe(1977);
    expect(fullYear(26, NOW)).toBe(2026);
    expect(parseHttpDate('Monday, 01-Jan-30 00:00:00 GMT', NOW)).toBe(Date.UTC(2030, 0, 1));
  });
});

describe('Age (RFC 9111 §5.1)', () => {
  it('uses the first member of a list and ignores what is not a non-negative integer', () => {
    expect(parseAge('7200, 0')).toBe(7200);
    expect(parseAge(['7200', '0'])).toBe(7200);
    expect(parseAge(' 30 ')).toBe(30);
    expect(parseAge('7200.0')).toBeUndefined();
    expect(parseAge('-1')).toBeUndefined();
    expect(parseAge('1e3')).toBeUndefined();
    expect(parseAge('')).toBeUndefined();
    expect(parseAge('99999999999')).toBe(2 ** 31);
  });
});
