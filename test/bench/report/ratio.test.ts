import { describe, expect, it } from 'vitest';
import { METRICS, metricOf } from '../../../bench/metrics.ts';
import { formatTimes, ratioAgainst, ratioRange, ratioWords } from '../../../bench/report/ratio.ts';
import { speedup } from '../../../bench/stats.ts';

const { transferRate, peakMemory, duration, cpuPerGB, upstreamFetches } = METRICS;

describe('ratio wording', () => {
  it('says "more memory" where a lower-is-better peer uses more, never "0.14×"', () => {
    // estuary 720 MB against s3fs's 100 MB: the stored ratio is 0.14 "times better".
    const r = speedup(720, 100, peakMemory.higherIsBetter)!;
    expect(r).toBeCloseTo(0.139, 3);
    expect(ratioWords(r, peakMemory)).toBe('7.2× more memory');
    expect(ratioWords(speedup(50, 100, false)!, peakMemory)).toBe('2.0× less memory');
    expect(ratioWords(speedup(4, 2, false)!, cpuPerGB)).toBe('2.0× more CPU');
    expect(ratioWords(speedup(1, 7, false)!, upstreamFetches)).toBe('7.0× fewer upstream fetches');
  });
  it('says "faster" and "slower" for rates (higher is better) and for times (lower is better)', () => {
    expect(ratioWords(speedup(136, 10, transferRate.higherIsBetter)!, transferRate)).toBe('13.6× faster');
    expect(ratioWords(speedup(10, 13, true)!, transferRate)).toBe('1.30× slower');
    expect(ratioWords(speedup(0.2, 0.8, duration.higherIsBetter)!, duration)).toBe('4.0× faster');
    expect(ratioWords(speedup(1.3, 1, false)!, duration)).toBe('1.30× slower');
  });
  it('calls results within half a percent level rather than claiming a direction', () => {
    expect(ratioWords(1.004, transferRate)).toBe('level');
    expect(ratioAgainst(0.998, transferRate, 's3fs')).toBe('level with s3fs');
    expect(ratioWords(1.04, transferRate)).toBe('1.04× faster');
  });
  it('names who the ratio is against', () => {
    expect(ratioAgainst(1 / 7.2, peakMemory, 's3fs')).toBe('7.2× more memory than s3fs');
  });
  it('keeps two decimals below 2×, one up to 100×, none above', () => {
    expect(formatTimes(1.394)).toBe('1.39');
    expect(formatTimes(1.06)).toBe('1.06');
    expect(formatTimes(7.24)).toBe('7.2');
    expect(formatTimes(13.64)).toBe('13.6');
    expect(formatTimes(1234)).toBe('1,234');
  });
  it('joins several ratios into one range, saying when they point both ways', () => {
    expect(ratioRange([2.4, 3.1, 2.6], transferRate)).toBe('2.4×–3.1× faster');
    expect(ratioRange([0.5, 0.8], transferRate)).toBe('1.25×–2.0× slower');
    expect(ratioRange([1 / 1.3, 2], transferRate)).toBe('from 1.30× slower to 2.0× faster');
    expect(ratioRange([1 / 7.2], peakMemory)).toBe('7.2× more memory');
    expect(ratioRange([1, 2], transferRate)).toBe('from level to 2.0× faster');
    expect(ratioRange([], transferRate)).toBeUndefined();
  });
});

describe('metricOf', () => {
  it('finds the metric of a schema-1 measurement by its unit and direction where only one fits', () => {
    expect(metricOf({ unit: 'MB', higherIsBetter: false })).toBe(METRICS.peakMemory);
    expect(metricOf({ unit: 'ms', higherIsBetter: false }).worse).toBe('worse');
    expect(metricOf({ metric: 'latency', unit: 'ms', higherIsBetter: false })).toBe(METRICS.latency);
  });
});
