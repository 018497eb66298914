// results.json: everything one `estuary bench` run measured, in a versioned, documented shape
// (docs/BENCHMARKING.md, "results.json"). Raw samples are kept next to the summaries so any figure
// can be recomputed; the zod schema below is what the smoke test checks a real file against.

import { z } from 'zod';
import { METRICS } from './metrics.ts';
import type { Measurement, ScenarioResult } from './scenario.ts';
import { speedup, summarize } from './stats.ts';

/**
 * 2: measurements name their metric, the "limit" became the reference (`reference`,
 * `vsReference`), load averages and the interleaving check were added. Files of schema 1 are
 * read through `parseResults`, which renames their fields.
 */
export const RESULTS_SCHEMA_VERSION = 'estuary-bench/2';

/** os.loadavg() at one moment: 1-, 5- and 15-minute averages of runnable processes. */
const loadAverage = z.array(z.number().nonnegative()).length(3);
const load = z.object({ start: loadAverage, end: loadAverage });

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
  /** The name in bench/metrics.ts; absent only in files upgraded from schema 1. */
  metric: z.string().min(1).optional(),
  unit: z.string().min(1),
  higherIsBetter: z.boolean(),
  samples: z.array(z.number().nullable()),
  summary,
  /** Times better than the baseline peer (above 1 is better); absent for the baseline itself. */
  vsBaseline: z.number().optional(),
  /** Times better than the reference peer, read the same way; absent for the reference itself. */
  vsReference: z.number().optional(),
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
  reference: z.string().optional(),
  peers: z.array(peer),
  measurements: z.array(measurement),
  method: z.array(z.string()).default([]),
  notes: z.array(z.string()),
  load: load.optional(),
  /** Quantities over time (bench/report/lines.ts), drawn as line charts; absent for most scenarios. */
  series: z
    .array(
      z.object({
        id: z.string().min(1),
        title: z.string(),
        xLabel: z.string(),
        yLabel: z.string(),
        x: z.array(z.number()),
        lines: z.array(z.object({ name: z.string(), y: z.array(z.number()) })),
      }),
    )
    .optional(),
  /** Whether each case's peers took turns run by run (bench/interleave.ts); absent if unchecked. */
  interleaving: z.object({ cases: z.number().int().nonnegative(), problems: z.array(z.string()) }).optional(),
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
  /** Absent only in files upgraded from schema 1. */
  load: load.optional(),
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
export type LoadRecord = z.infer<typeof load>;

/** Schema 1 called the reference "limit" and its ratio "ofLimit"; the meaning was the same. */
function upgradeV1(raw: Record<string, unknown>): Record<string, unknown> {
  const scenarios = Array.isArray(raw.scenarios) ? (raw.scenarios as Record<string, unknown>[]) : [];
  return {
    ...raw,
    schema: RESULTS_SCHEMA_VERSION,
    scenarios: scenarios.map(({ limit, measurements, ...s }) => ({
      ...s,
      ...(limit === undefined ? {} : { reference: limit }),
      measurements: (Array.isArray(measurements) ? (measurements as Record<string, unknown>[]) : []).map(
        ({ ofLimit, ...m }) => ({ ...m, ...(ofLimit === undefined ? {} : { vsReference: ofLimit }) }),
      ),
    })),
  };
}

/** Reads a results.json of this schema or of schema 1. */
export function parseResults(raw: unknown): Results {
  const obj = raw as Record<string, unknown> | null;
  const upgraded = obj && obj.schema === 'estuary-bench/1' ? upgradeV1(obj) : raw;
  return resultsSchema.parse(upgraded);
}
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

/** What the runner adds to a scenario's own result. */
export interface RunFacts {
  readonly durationSeconds: number;
  readonly failure?: string;
  readonly load?: LoadRecord;
  readonly interleaving?: ScenarioRecord['interleaving'];
}

/** Adds summaries and the ratios to the baseline and the reference peer to every measurement. */
export function scenarioRecord(r: ScenarioResult, facts: RunFacts): ScenarioRecord {
  const { durationSeconds, failure } = facts;
  const reference = r.reference;
  const measurements = r.measurements.map((m): MeasurementRecord => {
    const { unit, higherIsBetter } = METRICS[m.metric];
    const s = summarize(m.samples);
    const base = m.peer === r.baseline ? undefined : medianOf(r.measurements, m.case, r.baseline);
    const ref = m.peer === reference ? undefined : medianOf(r.measurements, m.case, reference);
    const vsBaseline = base === undefined ? undefined : speedup(s.median, base, higherIsBetter);
    const vsReference = ref === undefined ? undefined : speedup(s.median, ref, higherIsBetter);
    return {
      case: m.case,
      peer: m.peer,
      metric: m.metric,
      unit,
      higherIsBetter,
      samples: m.samples.map(finiteOrNull),
      summary: {
        n: s.n,
        median: finiteOrNull(s.median),
        min: finiteOrNull(s.min),
        max: finiteOrNull(s.max),
        spreadPct: s.spreadPct,
      },
      ...(vsBaseline === undefined ? {} : { vsBaseline }),
      ...(vsReference === undefined ? {} : { vsReference }),
    };
  });
  return {
    scenario: r.scenario,
    status: failure ? 'failed' : 'ok',
    ...(failure ? { error: failure } : {}),
    durationSeconds,
    settings: JSON.parse(JSON.stringify(r.settings)) as Record<string, unknown>,
    ...(r.baseline ? { baseline: r.baseline } : {}),
    ...(reference ? { reference } : {}),
    peers: r.peers.map((p) => ({ ...p })),
    measurements,
    method: [...(r.method ?? [])],
    notes: [...r.notes],
    ...(facts.load ? { load: facts.load } : {}),
    ...(r.series ? { series: r.series.map((x) => ({ ...x, x: [...x.x], lines: x.lines.map((l) => ({ ...l, y: [...l.y] })) })) } : {}),
    ...(facts.interleaving ? { interleaving: facts.interleaving } : {}),
  };
}
