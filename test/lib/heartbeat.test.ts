import { describe, expect, it } from 'vitest';
import { HEARTBEAT_EXTENSION_KEY, heartbeatPort, parseHeartbeat } from '../../lib/heartbeat.ts';

const enc = (x: unknown) => Buffer.from(typeof x === 'string' ? x : JSON.stringify(x));

/** A heartbeat exactly as the current Shoal agent sends it. */
const SHOAL_HEARTBEAT = {
  uuid: '8b6a3c2e9f1d11eebb2a0242ac120002',
  hostname: 'squid01.example.org',
  cache_port: 3128,
  cache_type: 'squid',
  verified: true,
  max_load: 122000,
  upstream: 'both',
  timestamp: 1763762000.123,
  load: 512,
  private_ip: '10.1.2.3',
  public_ip: '130.87.1.1',
};

describe('Shoal heartbeats are accepted as they are', () => {
  it('the current agent format', () => {
    const r = parseHeartbeat(enc(SHOAL_HEARTBEAT));
    expect(r.ok).toBe(true);
    if (r.ok) expect(heartbeatPort(r.heartbeat)).toBe(3128);
  });
  it('an old agent: squid_port, global_access, domain_access, external_ip only', () => {
    const { cache_port: _, public_ip: __, ...rest } = SHOAL_HEARTBEAT;
    const old = {
      ...rest,
      squid_port: '3128',
      global_access: true,
      domain_access: false,
      external_ip: '131.225.1.1',
    };
    const r = parseHeartbeat(enc(old));
    expect(r.ok).toBe(true);
    if (r.ok) expect(heartbeatPort(r.heartbeat)).toBe(3128);
  });
  it('only the required fields, unknown extras ignored', () => {
    const r = parseHeartbeat(
      enc({ uuid: 'a1', hostname: 'h', timestamp: 1, load: 0, squid_port: 3128, extra: { x: 1 } }),
    );
    expect(r.ok).toBe(true);
  });
  it('estuary fields under the versioned key', () => {
    const hb = {
      ...SHOAL_HEARTBEAT,
      [HEARTBEAT_EXTENSION_KEY]: {
        version: 1,
        cacheKind: 'estuary',
        site: 'KEK',
        lat: 36.1,
        lon: 140.1,
        intervalS: 30,
      },
    };
    const r = parseHeartbeat(enc(hb));
    expect(r.ok && r.heartbeat[HEARTBEAT_EXTENSION_KEY]?.site).toBe('KEK');
  });
});

describe('bad heartbeats are values, not exceptions', () => {
  it.each([
    ['not JSON', 'nope{', 'bad-json'],
    ['a JSON array', '[1,2]', 'invalid'],
    ['missing uuid', { ...SHOAL_HEARTBEAT, uuid: undefined }, 'invalid'],
    ['missing both ports', { ...SHOAL_HEARTBEAT, cache_port: undefined }, 'invalid'],
    ['negative load', { ...SHOAL_HEARTBEAT, load: -5 }, 'invalid'],
    ['absurd load', { ...SHOAL_HEARTBEAT, load: 1e12 }, 'invalid'],
    ['port out of range', { ...SHOAL_HEARTBEAT, cache_port: 70000 }, 'invalid'],
    ['not an address', { ...SHOAL_HEARTBEAT, public_ip: 'evil.example.org' }, 'invalid'],
    [
      'latitude off the globe',
      { ...SHOAL_HEARTBEAT, estuary_v1: { version: 1, cacheKind: 'squid', lat: 123, lon: 0 } },
      'invalid',
    ],
    [
      'unknown extension version',
      { ...SHOAL_HEARTBEAT, estuary_v1: { version: 9, cacheKind: 'squid' } },
      'invalid',
    ],
    ['markup in the host name', { ...SHOAL_HEARTBEAT, hostname: '<script>' }, 'invalid'],
  ])('%s', (_name, body, reason) => {
    const r = parseHeartbeat(enc(body));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toBe(reason);
  });
});
