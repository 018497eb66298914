import { describe, expect, it } from 'vitest';
import { invalidatedKeys } from '../../../gateway/cache/invalidation.ts';
import { isForwardable, isSafe } from '../../../gateway/http/methods.ts';

describe('invalidatedKeys', () => {
  const fwd = { key: 'http://o:81/x', url: 'http://o:81/x', servers: ['http://o:81'], path: '/x' };
  const rev = { key: 'reverse://site/x', url: 'reverse://site/x', servers: ['http://s1:8000'], path: '/x' };
  it('keeps to the same origin in forward mode', () => {
    expect(invalidatedKeys(fwd, 'o:81', ['/y?q', 'http://O:81/z', 'http://o:82/w', 'http://[bad'])).toEqual([
      'http://o:81/x',
      'http://o:81/y?q',
      'http://o:81/z',
    ]);
  });
  it('maps the gateway host and the ring servers to ring keys in reverse mode', () => {
    expect(
      invalidatedKeys(rev, 'gw:3128', ['/a', 'http://gw:3128/b', 'http://s1:8000/c', 'http://evil/d', undefined]),
    ).toEqual(['reverse://site/x', 'reverse://site/a', 'reverse://site/b', 'reverse://site/c']);
  });
});

describe('methods', () => {
  it('forwards any token but CONNECT and TRACE; only GET, HEAD, OPTIONS and TRACE are safe', () => {
    expect(isForwardable('M-SEARCH')).toBe(true);
    expect(isForwardable('TRACE')).toBe(false);
    expect(isForwardable('GE T')).toBe(false);
    expect(isSafe('OPTIONS')).toBe(true);
    expect(isSafe('M-SEARCH')).toBe(false);
  });
});
