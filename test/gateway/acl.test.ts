import { describe, expect, it } from 'vitest';
import { ClientAcl, DEFAULT_CLIENT_NETS, DestAcl } from '../../gateway/acl.ts';
import { HashRing } from '../../gateway/ring.ts';
import { CacheTotals } from '../../gateway/cache/totals.ts';
import { prefixOfUrl, summarise } from '../../gateway/summary.ts';

describe('DestAcl', () => {
  it('matches hosts, domains with subdomains, ports, CIDRs and presets', () => {
    const acl = new DestAcl([
      'cvmfs-s1.example.org',
      '.fnal.gov',
      '*.desy.de',
      'frontier.example:8000',
      '10.1.0.0/16',
    ]);
    expect(acl.allows('cvmfs-s1.example.org', 80)).toBe(true);
    expect(acl.allows('other.example.org', 80)).toBe(false);
    expect(acl.allows('fnal.gov', 80)).toBe(true);
    expect(acl.allows('cvmfs.fnal.gov', 8000)).toBe(true);
    expect(acl.allows('evilfnal.gov', 80)).toBe(false);
    expect(acl.allows('a.b.desy.de', 80)).toBe(true);
    expect(acl.allows('frontier.example', 8000)).toBe(true);
    expect(acl.allows('frontier.example', 80)).toBe(false);
    expect(acl.allows('10.1.2.3', 80)).toBe(true);
    expect(acl.allows('10.2.0.1', 80)).toBe(false);
    expect(new DestAcl(['@cvmfs']).allows('cvmfs-stratum-one.cern.ch', 8000)).toBe(true);
    expect(new DestAcl([]).allows('anything', 80)).toBe(false);
    expect(new DestAcl([]).empty).toBe(true);
  });
});

describe('ClientAcl', () => {
  it('allows loopback and private networks by default, including IPv4-mapped addresses', () => {
    const acl = new ClientAcl(DEFAULT_CLIENT_NETS);
    for (const a of [
      '127.0.0.1',
      '::1',
      '10.3.4.5',
      '192.168.1.1',
      '172.20.0.1',
      '::ffff:10.0.0.1',
      'fd00::1',
    ]) {
      expect(acl.allows(a)).toBe(true);
    }
    for (const a of ['8.8.8.8', '172.32.0.1', '2001:db8::1', undefined]) expect(acl.allows(a)).toBe(false);
  });
});

describe('HashRing', () => {
  it('maps each key to one peer, stably, and spreads keys', () => {
    const peers = ['http://a:3128', 'http://b:3128', 'http://c:3128'];
    const ring = new HashRing(peers);
    const again = new HashRing([...peers].reverse());
    const counts = new Map<string, number>();
    for (let i = 0; i < 3000; i++) {
      const o = ring.owner(`key${i}`)!;
      expect(again.owner(`key${i}`)).toBe(o);
      counts.set(o, (counts.get(o) ?? 0) + 1);
    }
    for (const p of peers) expect(counts.get(p)).toBeGreaterThan(600);
    const fewer = new HashRing(peers.slice(0, 2));
    let moved = 0;
    for (let i = 0; i < 3000; i++)
      if (ring.owner(`key${i}`) !== 'http://c:3128' && fewer.owner(`key${i}`) !== ring.owner(`key${i}`))
        moved++;
    expect(moved).toBe(0);
  });
});

describe('summary', () => {
  it('groups CVMFS bytes by repository and the rest by host and first path segment', () => {
    const base = { status: 200, headers: {}, requestTime: 0, responseTime: 0 };
    const totals = new CacheTotals();
    for (const e of [
      { ...base, key: '1', url: 'reverse://cvmfs/cvmfs/a.org/data/x', size: 10, repo: 'a.org' },
      { ...base, key: '2', url: 'http://s3.example:9000/bucket/k', size: 5 },
      { ...base, key: '3', url: 'http://s3.example:9000/bucket/j', size: 5 },
    ])
      totals.add(e);
    const s = summarise(totals, 1, 20, 3);
    expect(s.cvmfs).toEqual([{ repo: 'a.org', bytes: 10 }]);
    expect(s.prefixes).toEqual([{ prefix: 's3.example:9000/bucket', bytes: 10 }]);
    expect(prefixOfUrl('http://h/')).toBe('h');
    expect(prefixOfUrl('s3://kek-data/run42/a/b.root')).toBe('s3://kek-data/run42');
    expect(prefixOfUrl('reverse://cvmfs/data/x')).toBe('cvmfs/data');
  });
});
