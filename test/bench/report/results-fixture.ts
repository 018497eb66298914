// A whole results.json around scenario records, for the report tests.

import { RESULTS_SCHEMA_VERSION, resultsSchema, type Results, type ScenarioRecord } from '../../../bench/results.ts';

export function resultsOf(
  scenarios: ScenarioRecord[],
  over: { quick?: boolean; load?: Results['load']; cpus?: number } = {},
): Results {
  return resultsSchema.parse({
    schema: RESULTS_SCHEMA_VERSION,
    startedAt: '2026-01-01T00:00:00Z',
    finishedAt: '2026-01-01T00:10:00Z',
    interrupted: false,
    machine: {
      hostname: 'h',
      os: 'Debian',
      kernel: '6',
      arch: 'x64',
      cpuModel: 'cpu',
      cpus: over.cpus ?? 2,
      memoryBytes: 2 ** 30,
    },
    load: over.load ?? { start: [0.25, 0.2, 0.1], end: [0.5, 0.3, 0.2] },
    versions: { estuary: '0.1.0', node: '24' },
    settings: {
      scenarios: scenarios.map((s) => s.scenario),
      quick: over.quick ?? false,
      network: { name: 'site-cloud', rttMs: 20, bandwidthBps: 1e9 },
      backend: 's3rver',
      out: '/x',
    },
    scenarios,
  });
}
