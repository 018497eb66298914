// What the primary keeps of a worker that exited: its counters and histograms, summed into every
// later scrape, so the gateway's counters never go backwards when a worker is replaced.

import { AggregatorRegistry, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { retire } from '../../../gateway/cluster/retired.ts';
import { parseProm, total } from '../../../gateway/status/prom-text.ts';

/** One worker's report: a registry with the kinds of metrics a gateway worker has. */
async function report(requests: number, cacheBytes: number, lastOk: number, latencies: number[]) {
  const r = new Registry();
  new Counter({ name: 'req_total', help: 'h', labelNames: ['method'], registers: [r] }).inc({ method: 'GET' }, requests);
  new Gauge({ name: 'cache_bytes', help: 'h', registers: [r] }).set(cacheBytes);
  new Gauge({ name: 'last_ok_seconds', help: 'h', aggregator: 'max', registers: [r] }).set(lastOk);
  const h = new Histogram({ name: 'lat_seconds', help: 'h', buckets: [0.1, 1], registers: [r] });
  for (const l of latencies) h.observe(l);
  return r.getMetricsAsJSON();
}

async function scrape(...reports: Awaited<ReturnType<typeof report>>[]) {
  return parseProm(await AggregatorRegistry.aggregate(reports).metrics());
}

describe('kept totals of exited workers', () => {
  it('keeps counters and histograms (summed) and latest-value gauges (max), drops the others', async () => {
    const dead1 = await report(30, 1000, 50, [0.05, 2]);
    const dead2 = await report(12, 500, 70, [0.5]);
    const live = await report(5, 200, 60, [0.05]);
    const kept = retire(retire([], dead1), dead2);
    const s = await scrape(live, kept);
    expect(total(s, 'req_total', { method: 'GET' })).toBe(47);
    expect(total(s, 'cache_bytes')).toBe(200);
    expect(total(s, 'last_ok_seconds')).toBe(70);
    expect(total(s, 'lat_seconds_count')).toBe(4);
    expect(total(s, 'lat_seconds_bucket', { le: '0.1' })).toBe(2);
    expect(total(s, 'lat_seconds_bucket', { le: '1' })).toBe(3);
    expect(total(s, 'lat_seconds_sum')).toBeCloseTo(2.6);
  });

  it('never lowers a sum across a replacement: dead worker kept, replacement from zero', async () => {
    const before = await scrape(await report(30, 0, 1, []), await report(30, 0, 1, []));
    const kept = retire([], await report(30, 0, 1, []));
    const after = await scrape(await report(30, 0, 1, []), await report(0, 0, 0, []), kept);
    expect(total(after, 'req_total')).toBeGreaterThanOrEqual(total(before, 'req_total'));
  });

  it('changes neither argument', async () => {
    const dead = await report(3, 1, 1, []);
    const copy = JSON.stringify(dead);
    const first = retire([], dead);
    const firstCopy = JSON.stringify(first);
    retire(first, dead);
    expect(JSON.stringify(dead)).toBe(copy);
    expect(JSON.stringify(first)).toBe(firstCopy);
  });
});
