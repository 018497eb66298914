// results.json: everything one `estuary bench` run measured, in a versioned, documented shape
// (docs/BENCHMARKING.md, "results.json"). Raw samples are kept next to the summaries so any figure
// can be recomputed; the zod schema below is what the smoke test checks a real file against.

import { z } from 'zod';
import type { Measurement, ScenarioResult } from './scenario.ts';
import { speedup, summarize } from './stats.ts';

export const RESULTS_SCHEMA_VERSION = 'estuary-bench/1';

const summary = z.object({
  n: z.number().int().nonnegative(),
  median: z.number().nullable(),
  min: z.number().nullable(),
  max: z.number().nullable(),
  spreadPct: z.number(),
});

const measurement = z.object({
  case: z.string().min(1),
  peer: z.string().min(1),
  unit: z.string().min(1),
  higherIsBetter: z.boolean(),
  samples: z.array(z.number().nullable()),
  summary,
  /** Times better than the baseline peer (above 1 is better); absent for the baseline itself. */
  vsBaseline: z.number().optional(),
  /** Share of the limit peer's result reached, as a fraction (1 = as fast as the limit). */
  ofLimit: z.number().optional(),
});

const peer = z.object({
  peer: z.string().min(1),
  status: z.enum(['ok', 'skipped', 'failed']),
  reason: z.string().optional(),
  version: z.string().optional(),
});

const scenario = z.object({
  scenario: z.string().min(1),
  status: z.enum(['ok', 'failed']),
  error: z.string().optional(),
  durationSeconds: z.number().nonnegative(),
  settings: z.record(z.string(), z.unknown()),
  baseline: z.string().optional(),
  limit: z.string().optional(),
  peers: z.array(peer),
  measurements: z.array(measurement),
  notes: z.array(z.string()),
});

export const resultsSchema = z.object({
  schema: z.literal(RESULTS_SCHEMA_VERSION),
  startedAt: z.string(),
  finishedAt: z.string(),
  interrupted: z.boolean(),
  machine: z.object({
    hostname: z.string(),
    os: z.string(),
    kernel: z.string(),
    arch: z.string(),
    cpuModel: z.string(),
    cpus: z.number().int().positive(),
    memoryBytes: z.number().positive(),
  }),
  versions: z.object({ estuary: z.string(), node: z.string() }).catchall(z.string()),
  settings: z.object({
    scenarios: z.array(z.string()),
    quick: z.boolean(),
    runs: z.number().int().positive().optional(),
    network: z.object({ name: z.string(), rttMs: z.number(), bandwidthBps: z.number().optional() }),
    backend: z.string(),
    endpoint: z.string().optional(),
    out: z.string(),
  }),
  scenarios: z.array(scenario),
});

export type Results = z.infer<typeof resultsSchema>;
export type ScenarioRecord = Results['scenarios'][number];
export type MeasurementRecord = ScenarioRecord['measurements'][number];

/** JSON has no NaN: unmeasurable values become null. */
function finiteOrNull(v: number): number | null {
  return Number.isFinite(v) ? v : null;
}

function medianOf(all: readonly Measurement[], c: string, peerName: string | undefined): number | undefined {
  if (!peerName) return undefined;
  const m = all.find((x) => x.case === c && x.peer === peerName);
  return m ? summarize(m.samples).median : undefined;
}

/** Adds summaries and the ratios to the baseline and the limit peer to every measurement. */
export function scenarioRecord(r: ScenarioResult, durationSeconds: number, failure?: string): ScenarioRecord {
  const limit = typeof r.settings.limitPeer === 'string' ? r.settings.limitPeer : undefined;
  const measurements = r.measurements.map((m): MeasurementRecord => {
    const s = summarize(m.samples);
    const base = m.peer === r.baseline ? undefined : medianOf(r.measurements, m.case, r.baseline);
    const lim = m.peer === limit ? undefined : medianOf(r.measurements, m.case, limit);
    const vsBaseline = base === undefined ? undefined : speedup(s.median, base, m.higherIsBetter);
    const ofLimit = lim === undefined ? undefined : speedup(s.median, lim, m.higherIsBetter);
    return {
      case: m.case,
      peer: m.peer,
      unit: m.unit,
      higherIsBetter: m.higherIsBetter,
      samples: m.samples.map(finiteOrNull),
      summary: {
        n: s.n,
        median: finiteOrNull(s.median),
        min: finiteOrNull(s.min),
        max: finiteOrNull(s.max),
        spreadPct: s.spreadPct,
      },
      ...(vsBaseline === undefined ? {} : { vsBaseline }),
      ...(ofLimit === undefined ? {} : { ofLimit }),
    };
  });
  return {
    scenario: r.scenario,
    status: failure ? 'failed' : 'ok',
    ...(failure ? { error: failure } : {}),
    durationSeconds,
    settings: JSON.parse(JSON.stringify(r.settings)) as Record<string, unknown>,
    ...(r.baseline ? { baseline: r.baseline } : {}),
    ...(limit ? { limit } : {}),
    peers: r.peers.map((p) => ({ ...p })),
    measurements,
    notes: [...r.notes],
  };
}
