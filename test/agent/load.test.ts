import { describe, expect, it } from 'vitest';
import { pickAddresses } from '../../agent/addresses.ts';
import { defaultRouteInterface, netDevTxBytes, promCounter, rateKBps } from '../../agent/load.ts';
import { buildHeartbeat } from '../../agent/message.ts';
import { parseHeartbeat } from '../../lib/heartbeat.ts';

const PROM = `# HELP estuary_gateway_bytes_sent_total Body bytes sent.
# TYPE estuary_gateway_bytes_sent_total counter
estuary_gateway_bytes_sent_total 1048576
estuary_gateway_bytes_sent_total_extra 5
estuary_gateway_requests_total{method="GET",status_class="2xx"} 10
estuary_gateway_requests_total{method="HEAD",status_class="2xx"} 3 1700000000000
`;

const NETDEV = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 9000      90    0    0    0     0          0         0     9100      91    0    0    0     0       0          0
  eth0: 123456789 1000    0    0    0     0          0         0 987654321   2000    0    0    0     0       0          0
`;

describe('load sources', () => {
  it('reads a Prometheus counter, summing label sets and ignoring look-alike names', () => {
    expect(promCounter(PROM, 'estuary_gateway_bytes_sent_total')).toBe(1048576);
    expect(promCounter(PROM, 'estuary_gateway_requests_total')).toBe(13);
    expect(promCounter(PROM, 'missing_total')).toBeUndefined();
  });
  it('reads transmitted bytes from /proc/net/dev', () => {
    expect(netDevTxBytes(NETDEV, 'eth0')).toBe(987654321);
    expect(netDevTxBytes(NETDEV, 'lo')).toBe(9100);
    expect(netDevTxBytes(NETDEV, 'wlan0')).toBeUndefined();
  });
  it('finds the default route interface', () => {
    const route = 'Iface\tDestination\tGateway\nens5\t0000A8C0\t00000000\nens4\t00000000\t0101A8C0\n';
    expect(defaultRouteInterface(route)).toBe('ens4');
  });
  it('turns counters into KB/s, surviving a counter reset', () => {
    expect(rateKBps({ bytes: 0, atMs: 0 }, { bytes: 2048 * 10, atMs: 10_000 })).toBe(2);
    expect(rateKBps({ bytes: 1e9, atMs: 0 }, { bytes: 1024, atMs: 1000 })).toBe(1);
    expect(rateKBps({ bytes: 0, atMs: 5 }, { bytes: 10, atMs: 5 })).toBe(0);
  });
  it("picks Shoal's public and private IPv4 addresses", () => {
    const ifs = {
      lo: [{ address: '127.0.0.1', family: 'IPv4', internal: true }],
      eth0: [
        { address: '10.0.0.5', family: 'IPv4', internal: false },
        { address: 'fe80::1', family: 'IPv6', internal: false },
      ],
      eth1: [{ address: '130.87.1.1', family: 'IPv4', internal: false }],
    } as unknown as Parameters<typeof pickAddresses>[0];
    expect(pickAddresses(ifs)).toEqual({ publicIp: '130.87.1.1', privateIp: '10.0.0.5' });
  });
});

describe('the heartbeat an agent builds', () => {
  it("parses with the shared schema and advertises a gateway as Shoal's squid", () => {
    const hb = buildHeartbeat(
      {
        uuid: 'u-1',
        hostname: 'gw1',
        port: 3128,
        kind: 'estuary',
        upstream: 'cvmfs',
        maxLoad: 1000,
        privateIp: '10.0.0.5',
        site: 'KEK',
        intervalS: 30,
      },
      {
        nowMs: 1_700_000_000_000,
        load: 12.5,
        selfTest: { ok: true, ms: 3.4 },
        holds: { bytes: 10, cvmfs: [{ repo: 'atlas.cern.ch', bytes: 10 }], prefixes: [] },
      },
    );
    const r = parseHeartbeat(Buffer.from(JSON.stringify(hb)));
    expect(r.ok).toBe(true);
    expect(hb).toMatchObject({
      cache_type: 'squid',
      cache_port: 3128,
      timestamp: 1_700_000_000,
      verified: true,
      private_ip: '10.0.0.5',
    });
    expect(hb.public_ip).toBeUndefined();
    expect(hb.estuary_v1).toMatchObject({ cacheKind: 'estuary', site: 'KEK', selfTest: { ok: true, ms: 3 } });
  });
});
