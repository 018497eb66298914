// Squid's result codes from estuary's Cache-Status, and the line's fields in Squid's order.

import { describe, expect, it } from 'vitest';
import { squidCode, squidLine } from '../../gateway/access-log.ts';

describe('the access log', () => {
  it("names each outcome with Squid's code", () => {
    expect(squidCode('estuary; hit', 200)).toBe('TCP_HIT');
    expect(squidCode('estuary; fwd=miss; stored', 200)).toBe('TCP_MISS');
    expect(squidCode('estuary; fwd=uri-miss', 200)).toBe('TCP_MISS');
    expect(squidCode('estuary; fwd=stale; fwd-status=304', 200)).toBe('TCP_REFRESH_UNMODIFIED');
    expect(squidCode('estuary; fwd=stale', 200)).toBe('TCP_REFRESH_MODIFIED');
    expect(squidCode('estuary; hit; fwd=stale; detail=stale-on-error; ttl=-3', 200)).toBe('TCP_REFRESH_FAIL_OLD');
    expect(squidCode(undefined, 403)).toBe('TCP_DENIED');
    expect(squidCode(undefined, 400)).toBe('NONE');
  });

  it('writes the fields in the order of Squid\'s native format', () => {
    const line = squidLine({
      endMs: 1795491000123,
      elapsedMs: 120.4,
      client: '10.1.2.3',
      status: 200,
      bytes: 4131,
      method: 'GET',
      url: 'http://s1.example/cvmfs/a b',
      cacheStatus: 'estuary; fwd=miss',
      upstreamHost: 's1.example',
      contentType: 'application/x-cvmfs; charset=binary',
    });
    expect(line).toBe(
      '1795491000.123    120 10.1.2.3 TCP_MISS/200 4131 GET http://s1.example/cvmfs/a%20b - HIER_DIRECT/s1.example application/x-cvmfs\n',
    );
  });
});
