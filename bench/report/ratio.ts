// How a ratio between two peers is written. A bare "0.14×" makes the reader work out which way
// the unit points, and people get it wrong; so every ratio is turned to be at least 1 and carries
// the metric's own word: "7.2× more memory", "13.6× faster", "1.3× slower". Pure: no I/O.

import type { Metric } from '../metrics.ts';

/**
 * Below this distance from 1 two results are called level: a "1.00× faster" would claim a
 * direction the third digit does not support.
 */
const LEVEL = 0.005;

/**
 * "1.39", "7.2", "13.6", "250": two decimals below 2×, where peers are close and the second one
 * tells 1.39 from 1.43, one decimal above, none from 100×.
 */
export function formatTimes(n: number): string {
  if (n >= 100) return Math.round(n).toLocaleString('en-US');
  if (n >= 2) return n.toFixed(1);
  return n.toFixed(2);
}

function isLevel(timesBetter: number): boolean {
  return Math.abs(timesBetter - 1) < LEVEL;
}

/**
 * `timesBetter` is how many times better a result is than its reference (above 1 is better
 * whichever way the unit points, as results.json stores it). Returns "7.2× more memory" or,
 * within half a percent of 1, "level".
 */
export function ratioWords(timesBetter: number, metric: Metric): string {
  if (isLevel(timesBetter)) return 'level';
  return timesBetter > 1
    ? `${formatTimes(timesBetter)}× ${metric.better}`
    : `${formatTimes(1 / timesBetter)}× ${metric.worse}`;
}

/** A ratio with who it is compared with: "7.2× more memory than s3fs", "level with s3fs". */
export function ratioAgainst(timesBetter: number, metric: Metric, other: string): string {
  const words = ratioWords(timesBetter, metric);
  return words === 'level' ? `level with ${other}` : `${words} than ${other}`;
}

/**
 * Several ratios of one metric (one per dataset, say) as one phrase: "1.9×–3.1× faster" when all
 * point the same way, "from 1.3× slower to 2.0× faster" when they do not.
 */
export function ratioRange(timesBetter: readonly number[], metric: Metric): string | undefined {
  const finite = timesBetter.filter((r) => Number.isFinite(r) && r > 0);
  if (finite.length === 0) return undefined;
  const lo = Math.min(...finite);
  const hi = Math.max(...finite);
  if (ratioWords(lo, metric) === ratioWords(hi, metric)) return ratioWords(lo, metric);
  if (lo >= 1 - LEVEL && !isLevel(lo)) return `${formatTimes(lo)}×–${formatTimes(hi)}× ${metric.better}`;
  if (hi <= 1 + LEVEL && !isLevel(hi))
    return `${formatTimes(1 / hi)}×–${formatTimes(1 / lo)}× ${metric.worse}`;
  return `from ${ratioWords(lo, metric)} to ${ratioWords(hi, metric)}`;
}
