// What the cache holds, per CVMFS repository and per host/first-path-segment prefix, in the
// GatewaySummary shape (lib/gateway-summary.ts) the agent forwards in its heartbeats. Pure.

import { GATEWAY_SUMMARY_VERSION, type GatewaySummary, SUMMARY_LIMIT } from '../lib/gateway-summary.ts';
import type { EntryMeta } from './cache/entry.ts';

/**
 * host + first path segment for HTTP; for objects of the S3 endpoint `s3://bucket/first-segment`,
 * so a dataset staged through the gateway is findable by its bucket and top-level prefix.
 */
export function prefixOfUrl(url: string): string {
  const m = /^([a-z0-9]+):\/\/([^/]+)(\/[^/?]*)?/.exec(url);
  if (!m) return url;
  const seg = m[3] && m[3] !== '/' ? m[3] : '';
  return `${m[1] === 's3' ? 's3://' : ''}${m[2]}${seg}`;
}

function top(totals: Map<string, number>): { name: string; bytes: number }[] {
  return [...totals]
    .map(([name, bytes]) => ({ name, bytes }))
    .sort((a, b) => b.bytes - a.bytes || a.name.localeCompare(b.name))
    .slice(0, SUMMARY_LIMIT);
}

export function summarise(
  entries: Iterable<EntryMeta>,
  memoryBytes: number,
  diskBytes: number,
  objects: number,
): GatewaySummary {
  const repos = new Map<string, number>();
  const prefixes = new Map<string, number>();
  for (const e of entries) {
    if (e.repo) repos.set(e.repo, (repos.get(e.repo) ?? 0) + e.size);
    else {
      const p = prefixOfUrl(e.url);
      prefixes.set(p, (prefixes.get(p) ?? 0) + e.size);
    }
  }
  return {
    version: GATEWAY_SUMMARY_VERSION,
    cache: { memoryBytes, diskBytes, objects },
    cvmfs: top(repos).map((t) => ({ repo: t.name, bytes: t.bytes })),
    prefixes: top(prefixes).map((t) => ({ prefix: t.name, bytes: t.bytes })),
  };
}
