// The pure pieces behind the attack fixes: a proxy URL that cannot be built is a failure with a
// reason (not a thrown error), offered addresses that are no host make no proxy, a summary entry
// without its name is dropped, and a clock far ahead orders by receipt time.

import { describe, expect, it } from 'vitest';
import { orderingTimestamp } from '../../../discovery/admission.ts';
import { proxiesFromShoal, proxyUrl } from '../../../discovery/client/discover.ts';
import { parseGatewaySummary } from '../../../lib/gateway-summary.ts';
import { parseHeartbeat } from '../../../lib/heartbeat.ts';
import { proxyFetch } from '../../../lib/proxy-fetch.ts';

describe('proxyFetch with a proxy address that makes no URL', () => {
  it('resolves as a failure with a reason', async () => {
    const r = await proxyFetch('http://[fd00::1%lo]:3128', 'http://example.org/x', { timeoutMs: 1000 });
    expect(r.ok).toBe(false);
    expect(r.error).toMatch(/not a valid URL/);
  });
});

describe('offered addresses', () => {
  it('keeps IP addresses and host names, drops anything a URL or CVMFS would split', () => {
    expect(proxyUrl('10.0.0.2', 3128)).toBe('http://10.0.0.2:3128');
    expect(proxyUrl('2001:db8::1', 3128)).toBe('http://[2001:db8::1]:3128');
    expect(proxyUrl('cache-1.example.org', 80)).toBe('http://cache-1.example.org:80');
    for (const bad of ['10.0.0.1:3128;DIRECT;http://evil', 'a b', 'x]y', 'fd00::1%lo', '-x.org', 'a|b'])
      expect(proxyUrl(bad, 3128)).toBeUndefined();
    const skipped: string[] = [];
    const got = proxiesFromShoal(
      { 0: { squid_port: 3128, public_ip: 'a b' }, 1: { squid_port: 3128, public_ip: '10.0.0.2' } },
      (h) => skipped.push(h),
    );
    expect(got).toEqual(['http://10.0.0.2:3128']);
    expect(skipped).toEqual(['a b']);
  });
});

describe('heartbeat addresses', () => {
  const hb = (ip: string) =>
    Buffer.from(JSON.stringify({ uuid: 'u', hostname: 'h.example.org', timestamp: 1, load: 1, cache_port: 3128, public_ip: ip }));
  it.each(['fd00::1%lo', '224.0.0.1', 'ff02::1', '255.255.255.255'])('%s makes the heartbeat invalid', (ip) => {
    expect(parseHeartbeat(hb(ip)).ok).toBe(false);
  });
  it('accepts a unicast address', () => {
    expect(parseHeartbeat(hb('192.0.2.1')).ok).toBe(true);
  });
  const withSite = (site: string) =>
    Buffer.from(
      JSON.stringify({
        uuid: 'u', hostname: 'h.example.org', timestamp: 1, load: 1, cache_port: 3128, public_ip: '192.0.2.1',
        estuary_v1: { version: 1, cacheKind: 'squid', site },
      }),
    );
  it.each(['CERN\u202eDORP', 'a\nb', '\u001b[31mred', 'x\u0085y'])('site %j makes the heartbeat invalid', (site) => {
    expect(parseHeartbeat(withSite(site)).ok).toBe(false);
  });
  it('accepts an ordinary site name', () => {
    expect(parseHeartbeat(withSite('UKI-NORTHGRID-MAN-HEP')).ok).toBe(true);
  });
});

describe('parseGatewaySummary', () => {
  it('drops entries without a name and tolerates a missing list', () => {
    const s = parseGatewaySummary({ version: 1, cache: { diskBytes: 5 }, cvmfs: [{ bytes: 3 }, { repo: 'a.cern.ch', bytes: 2 }] });
    expect(s?.cvmfs).toEqual([{ repo: 'a.cern.ch', bytes: 2 }]);
    expect(s?.prefixes).toEqual([]);
    expect(s?.cache).toEqual({ memoryBytes: 0, diskBytes: 5, objects: 0 });
  });
  it('is undefined for another version or no cache object', () => {
    expect(parseGatewaySummary({ version: 2, cache: {} })).toBeUndefined();
    expect(parseGatewaySummary({ version: 1 })).toBeUndefined();
    expect(parseGatewaySummary(null)).toBeUndefined();
  });
});

describe('orderingTimestamp', () => {
  it('trusts a timestamp within drift, and uses the receipt time for one far ahead', () => {
    expect(orderingTimestamp(1005, 1_000_000)).toBe(1005);
    expect(orderingTimestamp(500, 1_000_000)).toBe(500);
    expect(orderingTimestamp(1000 + 3600, 1_000_000)).toBe(1000);
  });
});
