// What the cache holds, per CVMFS repository and per host/first-path-segment prefix, in the
// GatewaySummary shape (lib/gateway-summary.ts) the agent forwards in its heartbeats. Read from
// the disk tier's running totals: a summary costs its SUMMARY_LIMIT lines, not the cache's size.

import { GATEWAY_SUMMARY_VERSION, type GatewaySummary, SUMMARY_LIMIT } from '../lib/gateway-summary.ts';
import type { CacheTotals } from './cache/totals.ts';

export { prefixOfUrl } from './cache/totals.ts';

export function summarise(totals: CacheTotals, memoryBytes: number, diskBytes: number, objects: number): GatewaySummary {
  return {
    version: GATEWAY_SUMMARY_VERSION,
    cache: { memoryBytes, diskBytes, objects },
    cvmfs: totals.repos(SUMMARY_LIMIT).map((t) => ({ repo: t.name, bytes: t.bytes })),
    prefixes: totals.prefixes(SUMMARY_LIMIT).map((t) => ({ prefix: t.name, bytes: t.bytes })),
  };
}
