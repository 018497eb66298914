// Statistics over a measurement's samples and the ratios the reports show. Pure: no I/O.
// The median is the headline because a benchmark's noise is one-sided (a stall, a GC pause, a
// neighbour's burst slows a run, nothing makes it faster than the machine), so the mean would be
// dragged by the slowest run; spread is shown as min–max and as a share of the median.

export interface Summary {
  readonly n: number;
  readonly median: number;
  readonly min: number;
  readonly max: number;
  /** (max − min) / median, as a percentage; 0 with one sample. */
  readonly spreadPct: number;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function summarize(samples: readonly number[]): Summary {
  const finite = samples.filter((s) => Number.isFinite(s));
  if (finite.length === 0)
    return { n: 0, median: Number.NaN, min: Number.NaN, max: Number.NaN, spreadPct: 0 };
  const m = median(finite);
  const min = Math.min(...finite);
  const max = Math.max(...finite);
  const spreadPct = m === 0 ? 0 : ((max - min) / Math.abs(m)) * 100;
  return { n: finite.length, median: m, min, max, spreadPct };
}

/**
 * How many times better `value` is than `reference`: above 1 means better whichever way the unit
 * points, so "1.7×" reads the same for MB/s (higher is better) and seconds (lower is better).
 */
export function speedup(value: number, reference: number, higherIsBetter: boolean): number | undefined {
  if (!Number.isFinite(value) || !Number.isFinite(reference) || value <= 0 || reference <= 0)
    return undefined;
  return higherIsBetter ? value / reference : reference / value;
}

/** Megabytes (10^6, as the paper's datasets are sized) per second. */
export function mbPerSecond(bytes: number, seconds: number): number {
  return seconds > 0 ? bytes / 1e6 / seconds : Number.NaN;
}

/** A number for a table cell: three significant digits, no exponent for everyday magnitudes. */
export function formatNumber(v: number | undefined): string {
  if (v === undefined || !Number.isFinite(v)) return '–';
  const a = Math.abs(v);
  if (a >= 1000) return Math.round(v).toLocaleString('en-US');
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  if (a >= 1) return v.toFixed(2);
  return v.toPrecision(2);
}
