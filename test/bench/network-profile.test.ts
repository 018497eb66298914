import { describe, expect, it } from 'vitest';
import { isEstuaryError } from '../../lib/errors.ts';
import {
  describeProfile,
  formatBandwidth,
  parseBandwidth,
  parseNetworkProfile,
  parseRtt,
  SITE_CLOUD,
} from '../../bench/network-profile.ts';

describe('parseNetworkProfile', () => {
  it('knows local and site-cloud', () => {
    expect(parseNetworkProfile('local')).toEqual({ name: 'local', rttMs: 0, bandwidthBps: undefined });
    expect(parseNetworkProfile('site-cloud')).toBe(SITE_CLOUD);
    expect(SITE_CLOUD).toMatchObject({ rttMs: 20, bandwidthBps: 1e9 });
  });
  it('parses RTT,BANDWIDTH in the usual spellings', () => {
    expect(parseNetworkProfile('50ms,100mbit')).toEqual({
      name: '50ms,100mbit',
      rttMs: 50,
      bandwidthBps: 1e8,
    });
    expect(parseNetworkProfile(' 0.1s , 1gbit ')).toMatchObject({ rttMs: 100, bandwidthBps: 1e9 });
    expect(parseNetworkProfile('20,50MB/s')).toMatchObject({ rttMs: 20, bandwidthBps: 4e8 });
  });
  it.each(['', 'fast', '20ms', '20ms,1gbit,x', 'abc,1gbit', '20ms,lots', '90s,1gbit', '20ms,1bit'])(
    'refuses %j with a usage error naming the accepted forms',
    (value) => {
      try {
        parseNetworkProfile(value);
        expect.unreachable();
      } catch (err) {
        expect(isEstuaryError(err)).toBe(true);
        expect((err as { code: string }).code).toBe('ESTUARY_BENCH_BAD_NETWORK');
        expect((err as { exitCode: number }).exitCode).toBe(2);
        expect((err as Error).message).toContain('site-cloud');
      }
    },
  );
});

describe('parts', () => {
  it('parses rates and RTTs', () => {
    expect(parseBandwidth('40MiB/s')).toBe(8 * 40 * 2 ** 20);
    expect(parseRtt('35')).toBe(35);
    expect(() => parseRtt('-1ms')).toThrow();
  });
  it('formats for humans', () => {
    expect(formatBandwidth(1e9)).toBe('1gbit');
    expect(formatBandwidth(undefined)).toBe('unlimited');
    expect(describeProfile(SITE_CLOUD)).toBe('site-cloud: 20ms RTT, 1gbit');
  });
});
