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

describe('heartbeats in every shape Shoal agents send', () => {
  /** shoal-agent 1.0.2 from PyPI, python3 json.dumps, with max_load and squid_port from the conf file. */
  const PYPI_102 =
    '{"uuid": "5f0c1e3aa8b211f0a2a00242ac120002", "hostname": "squid.example.org", "squid_port": "3128", ' +
    '"verified": false, "max_load": "50000", "private_ip": "10.7.0.2", "external_ip": "192.0.2.50", ' +
    '"timestamp": 1763762000.5166442, "load": 0.0}';
  /** hep-gc/shoal master (agent 1.0.2 there too): cache_port, cache_type, upstream. */
  const MASTER =
    '{"uuid": "5f0c1e3aa8b211f0a2a00242ac120002", "hostname": "squid.example.org", "cache_port": 3128, ' +
    '"cache_type": "squid", "verified": false, "max_load": 122000, "upstream": "both", ' +
    '"public_ip": "130.87.1.1", "timestamp": 1763762000.5, "load": 12.3}';
  /** shoal-agent 0.9.x (python 2): options from the conf file arrive as the strings written there. */
  const V09 =
    '{"uuid": "5f0c1e3aa8b211f0a2a00242ac120002", "hostname": "squid.example.org", "squid_port": 3128, ' +
    '"verified": "False", "max_load": "122000", "global_access": "True", "domain_access": "False", ' +
    '"public_ip": "130.87.1.1", "timestamp": 1763762000.5, "load": 12}';

  it.each([
    ['PyPI 1.0.2 with conf-file strings', PYPI_102, { max_load: 50000, squid_port: 3128 }],
    ['hep-gc/shoal master', MASTER, { max_load: 122000, cache_port: 3128 }],
    ['0.9.x with "True"/"False"', V09, { global_access: true, domain_access: false, verified: false }],
  ])('%s', (_name, text, want) => {
    const r = parseHeartbeat(Buffer.from(text));
    expect(r.ok, r.ok ? '' : r.detail).toBe(true);
    if (r.ok) expect(r.heartbeat).toMatchObject(want);
  });
  it('treats a max_load or flag it cannot read as not given, as Shoal never reads them back', () => {
    const r = parseHeartbeat(enc({ ...SHOAL_HEARTBEAT, max_load: 'lots', global_access: 'maybe' }));
    expect(r.ok).toBe(true);
    if (r.ok) expect([r.heartbeat.max_load, r.heartbeat.global_access]).toEqual([undefined, undefined]);
  });
  it('drops only the holdings that break the limits, never the heartbeat', () => {
    const long = `${'r'.repeat(200)}.cern.ch`;
    const r = parseHeartbeat(
      enc({
        ...SHOAL_HEARTBEAT,
        [HEARTBEAT_EXTENSION_KEY]: {
          version: 1,
          cacheKind: 'estuary',
          holds: {
            bytes: 10,
            cvmfs: [
              { repo: long, bytes: 1 },
              { repo: 'atlas.cern.ch', bytes: 5 },
            ],
            prefixes: [{ prefix: 'p'.repeat(300), bytes: 1 }, { prefix: 'bucket/data', bytes: 4 }, 'junk'],
          },
        },
      }),
    );
    expect(r.ok, r.ok ? '' : r.detail).toBe(true);
    if (r.ok) {
      expect(r.heartbeat[HEARTBEAT_EXTENSION_KEY]!.holds).toEqual({
        bytes: 10,
        cvmfs: [{ repo: 'atlas.cern.ch', bytes: 5 }],
        prefixes: [{ prefix: 'bucket/data', bytes: 4 }],
      });
    }
  });
});
