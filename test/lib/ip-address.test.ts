// Addresses judged on their bytes: every spelling of loopback is loopback, whatever the text.

import { describe, expect, it } from 'vitest';
import { addressScope, ipBytes } from '../../lib/ip-address.ts';

describe('addressScope', () => {
  it.each([
    ['::ffff:7f00:1', 'loopback'],
    ['0:0:0:0:0:ffff:127.0.0.1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['0::1', 'loopback'],
    ['::0:1', 'loopback'],
    ['0000:0000:0000:0000:0000:0000:0000:0001', 'loopback'],
    ['::1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['::', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['169.254.1.1', 'link-local'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['2001:db8::1', 'unicast'],
    ['192.0.2.10', 'unicast'],
    ['::ffff:1.2.3.4', 'unicast'],
    ['1::', 'unicast'],
  ])('%s is %s', (address, scope) => {
    expect(addressScope(address)).toBe(scope);
  });

  it.each(['fd00::1%lo', '2001:db8::1%eth0', 'a b', '10.0.0.1:3128', 'example.org', ''])(
    '%s is not an address a client can use',
    (address) => {
      expect(addressScope(address)).toBeUndefined();
    },
  );

  it('folds IPv4-mapped IPv6 to its four bytes and expands :: in the middle', () => {
    expect(ipBytes('::ffff:10.1.2.3')).toEqual([10, 1, 2, 3]);
    expect(ipBytes('1:2::8')).toEqual([0, 1, 0, 2, ...Array(10).fill(0), 0, 8]);
  });
});
