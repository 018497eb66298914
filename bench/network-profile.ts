// Network profiles for --network: where the S3 server sits as seen from the mounts. Pure parsing.
//
// `site-cloud` stands for a research site reaching a cloud region over the research network, the
// situation of the KEK paper (KEK in Tsukuba to AWS): 20 ms round trip and 1 Gbit/s. 20 ms is the
// order of a national research backbone plus the cloud's edge between a site and the nearest
// region (a metro-distance link would be 2–5 ms, a transpacific one 100+ ms); 1 Gbit/s is the share
// of a 10–100 Gbit/s site uplink that one transfer host commonly gets, and it is also the rate at
// which a single loss-free TCP stream at 20 ms stops being the limit (window 4 MiB / 20 ms ≈
// 200 MiB/s), so the profile exposes both latency-bound small files and bandwidth-bound big ones.

import { benchErrors } from './errors.ts';

export interface NetworkProfile {
  readonly name: string;
  /** Round-trip time added between the mounts and the S3 server, in milliseconds; 0 for local. */
  readonly rttMs: number;
  /** Bottleneck rate in bits per second; undefined for local (no limit). */
  readonly bandwidthBps: number | undefined;
}

export const LOCAL: NetworkProfile = { name: 'local', rttMs: 0, bandwidthBps: undefined };
export const SITE_CLOUD: NetworkProfile = { name: 'site-cloud', rttMs: 20, bandwidthBps: 1e9 };

const RATE_UNITS: Record<string, number> = {
  bit: 1,
  kbit: 1e3,
  mbit: 1e6,
  gbit: 1e9,
  bps: 1,
  kbps: 1e3,
  mbps: 1e6,
  gbps: 1e9,
  'b/s': 8,
  'kb/s': 8e3,
  'mb/s': 8e6,
  'gb/s': 8e9,
  'kib/s': 8 * 2 ** 10,
  'mib/s': 8 * 2 ** 20,
  'gib/s': 8 * 2 ** 30,
};

/** "1gbit", "100mbit", "50MB/s", "40MiB/s" → bits per second. */
export function parseBandwidth(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z/]+)$/i.exec(text.trim());
  const unit = m ? RATE_UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined)
    throw new Error(`bandwidth "${text}" is not a rate such as 1gbit, 100mbit or 50MB/s`);
  const bps = Number(m[1]) * unit;
  // tbf cannot shape below a few kbit/s usefully, and above 100 Gbit/s loopback is the limit anyway.
  if (bps < 8e3 || bps > 1e11) throw new Error(`bandwidth "${text}" is outside 1kB/s–100gbit`);
  return bps;
}

/** "20ms", "20", "0.1s" → milliseconds (a bare number is milliseconds, as RTTs are quoted). */
export function parseRtt(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s)?$/.exec(text.trim());
  if (!m) throw new Error(`round-trip time "${text}" is not a duration such as 20ms or 0.1s`);
  const ms = Number(m[1]) * (m[2] === 's' ? 1000 : 1);
  // One minute is beyond any real link; it keeps a typo such as 20s from hanging a run for hours.
  if (ms > 60_000) throw new Error(`round-trip time "${text}" is above 60s`);
  return ms;
}

export function parseNetworkProfile(value: string): NetworkProfile {
  const v = value.trim();
  if (v === 'local') return LOCAL;
  if (v === 'site-cloud') return SITE_CLOUD;
  const parts = v.split(',');
  if (parts.length !== 2) throw benchErrors.badNetwork(value, 'expected a profile name or two values');
  try {
    const rttMs = parseRtt(parts[0]!);
    const bandwidthBps = parseBandwidth(parts[1]!);
    return { name: `${formatRtt(rttMs)},${formatBandwidth(bandwidthBps)}`, rttMs, bandwidthBps };
  } catch (err) {
    throw benchErrors.badNetwork(value, (err as Error).message);
  }
}

export function formatRtt(ms: number): string {
  return `${Number(ms.toFixed(3))}ms`;
}

export function formatBandwidth(bps: number | undefined): string {
  if (bps === undefined) return 'unlimited';
  if (bps >= 1e9 && bps % 1e9 === 0) return `${bps / 1e9}gbit`;
  if (bps >= 1e6 && bps % 1e6 === 0) return `${bps / 1e6}mbit`;
  if (bps >= 1e3 && bps % 1e3 === 0) return `${bps / 1e3}kbit`;
  return `${Math.round(bps)}bit`;
}

export function describeProfile(p: NetworkProfile): string {
  if (p.rttMs === 0 && p.bandwidthBps === undefined) return 'local (loopback, no emulation)';
  return `${p.name}: ${formatRtt(p.rttMs)} RTT, ${formatBandwidth(p.bandwidthBps)}`;
}
