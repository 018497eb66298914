import { describe, expect, it } from 'vitest';
import { proxiesFromShoal } from '../../../discovery/client/discover.ts';

describe("estuary discover reading a Shoal server's answer", () => {
  it('takes squid_port as Shoal echoes it from an agent conf file: a string', () => {
    expect(
      proxiesFromShoal({
        '0': { hostname: 'a', squid_port: '3128', public_ip: '192.0.2.1', local: null },
        '1': { hostname: 'b', squid_port: 3129, public_ip: '192.0.2.2', local: null },
      }),
    ).toEqual(['http://192.0.2.1:3128', 'http://192.0.2.2:3129']);
  });
  it('skips a port that is not one, and uses the private address only for a local cache', () => {
    expect(
      proxiesFromShoal({
        '0': { squid_port: 'x', public_ip: '192.0.2.1' },
        '1': { squid_port: '99999', public_ip: '192.0.2.1' },
        '2': { squid_port: 3128, public_ip: '192.0.2.3', private_ip: '10.0.0.3', local: true },
        '3': { squid_port: 3128, public_ip: '192.0.2.4', private_ip: '10.0.0.4', local: null },
      }),
    ).toEqual(['http://10.0.0.3:3128', 'http://192.0.2.4:3128']);
  });
});
