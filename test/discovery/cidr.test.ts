import { describe, expect, it } from 'vitest';
import {
  cidrContains,
  isPrivateAddress,
  normaliseAddress,
  parseCidr,
  sameSubnet,
} from '../../discovery/cidr.ts';

describe('CIDR arithmetic', () => {
  it('IPv4 membership at every boundary', () => {
    const c = parseCidr('172.16.0.0/12');
    expect(cidrContains(c, '172.16.0.0')).toBe(true);
    expect(cidrContains(c, '172.31.255.255')).toBe(true);
    expect(cidrContains(c, '172.32.0.0')).toBe(false);
    expect(cidrContains(c, '172.15.255.255')).toBe(false);
    expect(cidrContains(parseCidr('0.0.0.0/0'), '8.8.8.8')).toBe(true);
    expect(cidrContains(parseCidr('10.1.2.3'), '10.1.2.3')).toBe(true);
    expect(cidrContains(parseCidr('10.1.2.3'), '10.1.2.4')).toBe(false);
  });
  it('IPv6, compressed forms and IPv4-mapped clients', () => {
    const c = parseCidr('2001:db8::/32');
    expect(cidrContains(c, '2001:db8:ffff::1')).toBe(true);
    expect(cidrContains(c, '2001:db9::1')).toBe(false);
    expect(cidrContains(c, '10.0.0.1')).toBe(false);
    expect(normaliseAddress('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(cidrContains(parseCidr('10.0.0.0/8'), '::ffff:10.1.2.3')).toBe(true);
  });
  it("Shoal's private ranges", () => {
    for (const a of ['10.0.0.1', '172.20.1.1', '192.168.5.5', 'fd00::1'])
      expect(isPrivateAddress(a)).toBe(true);
    for (const a of ['130.87.1.1', '172.32.0.1', '8.8.8.8', '2001:db8::1'])
      expect(isPrivateAddress(a)).toBe(false);
  });
  it('same subnet: /24 and /64', () => {
    expect(sameSubnet('10.1.2.3', '10.1.2.200')).toBe(true);
    expect(sameSubnet('10.1.2.3', '10.1.3.3')).toBe(false);
    expect(sameSubnet('2001:db8:1:2::1', '2001:db8:1:2::ff')).toBe(true);
  });
  it('refuses garbage', () => {
    expect(() => parseCidr('10.0.0.0/33')).toThrow();
    expect(() => parseCidr('nope/8')).toThrow();
  });
});
