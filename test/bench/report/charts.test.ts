import { describe, expect, it } from 'vitest';
import { chartId, chartsFor, splitCase } from '../../../bench/report/charts.ts';
import { escapeXml, niceScale, renderBarChart, tickLabel } from '../../../bench/report/svg.ts';
import { fuseRecord } from './fixture.ts';

describe('chartsFor', () => {
  it('puts the datasets along the x axis of one chart per copy direction, as in Figures 3 and 4', () => {
    const charts = chartsFor(fuseRecord);
    expect(charts.map((c) => c.id)).toEqual(['fuse-cp-up', 'fuse-cp-down', 'fuse-seconds']);
    const up = charts[0]!;
    expect(up.categories).toEqual(['1000×1MB', '1×1000MB']);
    expect(up.series.map((s) => s.peer)).toEqual(['estuary', 's3fs', 'sdk-limit']);
    expect(up.series[2]!.medians).toEqual([42, null]);
  });
  it('names chart files safely and distinctly', () => {
    expect(chartId('discovery', 'µs')).toBe('discovery-us');
    expect(chartId('gateway', 'req/s')).toBe('gateway-req-s');
  });
  it('groups other cases by unit', () => {
    expect(splitCase('ls -l 1000 files', 'seconds')).toEqual({
      family: 'seconds',
      category: 'ls -l 1000 files',
    });
    expect(chartsFor(fuseRecord)[2]!.categories).toEqual(['ls -l 1000 files', 'time to first byte']);
  });
});

describe('renderBarChart', () => {
  const svg = renderBarChart(chartsFor(fuseRecord)[0]!);
  it('is a standalone SVG document with one bar per measured value and a legend', () => {
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trim().endsWith('</svg>')).toBe(true);
    expect(svg.match(/<rect [^>]*><title>/g)).toHaveLength(5);
    expect(svg).toContain('>sdk-limit</text>');
    expect(svg).toContain('MB/s (higher is better)');
  });
  it('draws a whisker from the slowest to the fastest run', () => {
    expect(svg.match(/<line [^>]*stroke="#333"\/>/g)!.length).toBeGreaterThanOrEqual(3);
  });
  it('bars are as tall as their value on a scale starting at zero', () => {
    const heights = [...svg.matchAll(/height="([\d.]+)" fill="[^"]+"><title>estuary, 1000×1MB/g)].map((m) =>
      Number(m[1]),
    );
    const limit = [...svg.matchAll(/height="([\d.]+)" fill="[^"]+"><title>sdk-limit, 1000×1MB/g)].map((m) =>
      Number(m[1]),
    );
    expect(heights[0]! / limit[0]!).toBeCloseTo(21 / 42, 2);
  });
});

describe('svg helpers', () => {
  it('chooses round axis steps', () => {
    expect(niceScale(87)).toEqual({ top: 100, step: 20 });
    const small = niceScale(0.13);
    expect(small.step).toBeCloseTo(0.05);
    expect(small.top).toBeCloseTo(0.15);
    expect(niceScale(0)).toEqual({ top: 1, step: 0.2 });
  });
  it('labels ticks without float noise', () => {
    expect(tickLabel(0.15000000000000002)).toBe('0.15');
    expect(tickLabel(40)).toBe('40');
    expect(tickLabel(1000)).toBe('1,000');
  });
  it('escapes markup in labels', () => {
    expect(escapeXml('a<b & "c">')).toBe('a&lt;b &amp; &quot;c&quot;&gt;');
  });
});
