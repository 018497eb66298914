// What the gateway keeps of a worker that exited: its last reported counters. A replacement
// worker counts from zero, so sums over the live workers alone would drop by the dead one's
// totals, and Prometheus reads a drop as a counter reset (rate() and increase() would count the
// other workers' whole totals again). The primary adds these kept totals to every sum, as the
// exporters of multi-process servers do, so the gateway's counters only ever go up while it runs.
// Pure: no I/O, tested on its own.

import type { MetricObjectWithValues, MetricValue } from 'prom-client';

type Value = MetricValue<string> & { metricName?: string };
export type Metric = MetricObjectWithValues<Value>;

/**
 * What of a dead worker's report still counts: counters and histograms (summed) and gauges the
 * cluster takes the latest of (timestamps, max). Its other gauges (cache bytes, connections open)
 * described the process that is gone.
 */
function kept(m: Metric): boolean {
  const type = String(m.type);
  return ((type === 'counter' || type === 'histogram') && m.aggregator === 'sum') || m.aggregator === 'max';
}

const valueKey = (v: Value): string =>
  `${v.metricName ?? ''}\u0000${JSON.stringify(Object.entries(v.labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))}`;

/** `totals` with a dead worker's last report added; neither argument is changed. */
export function retire(totals: readonly Metric[], report: readonly Metric[]): Metric[] {
  const byName = new Map(totals.map((m) => [m.name, m]));
  for (const m of report) {
    if (!kept(m)) continue;
    const prev = byName.get(m.name);
    const values = new Map((prev?.values ?? []).map((v) => [valueKey(v), v]));
    for (const v of m.values) {
      const k = valueKey(v);
      const p = values.get(k);
      const value = p === undefined ? v.value : m.aggregator === 'max' ? Math.max(p.value, v.value) : p.value + v.value;
      values.set(k, { ...v, value });
    }
    byName.set(m.name, { ...(prev ?? m), values: [...values.values()] });
  }
  return [...byName.values()];
}
