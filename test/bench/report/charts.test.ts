import { describe, expect, it } from 'vitest';
import { caveatFor, chartId, chartsFor, splitCase } from '../../../bench/report/charts.ts';
import { escapeXml, niceScale, renderBarChart, tickLabel } from '../../../bench/report/svg.ts';
import { fuseRecord } from './fixture.ts';

const full = { quick: false };

describe('chartsFor', () => {
  it('puts the datasets along the x axis of one chart per copy direction, as in Figures 3 and 4', () => {
    const charts = chartsFor(fuseRecord, full);
    expect(charts.map((c) => c.id)).toEqual(['fuse-cp-up', 'fuse-rss-up', 'fuse-cp-down', 'fuse-seconds']);
    const up = charts[0]!;
    expect(up.categories).toEqual(['1000×1MB', '1×1000MB']);
    expect(up.series.map((s) => s.peer)).toEqual(['estuary', 's3fs']);
  });
  it('takes the reference peer out of the bars and keeps it as a line', () => {
    const up = chartsFor(fuseRecord, full)[0]!;
    expect(up.reference?.peer).toBe('sdk-alone');
    expect(up.reference?.medians).toEqual([42, 50]);
    expect(chartsFor(fuseRecord, full)[3]!.reference).toBeUndefined();
  });
  it('says on a chart when it comes from --quick or a single run', () => {
    expect(caveatFor(true, 3)).toMatch(/^--quick run/);
    expect(caveatFor(false, 1)).toMatch(/^single run/);
    expect(caveatFor(false, 3)).toBeUndefined();
    expect(chartsFor(fuseRecord, { quick: true })[0]!.caveat).toMatch(/--quick/);
    expect(chartsFor(fuseRecord, full)[0]!.caveat).toBeUndefined();
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
    expect(chartsFor(fuseRecord, full)[3]!.categories).toEqual(['ls -l 1000 files', 'time to first byte']);
  });
});

/** Bar heights in px, by "<peer>, <category>" from each bar's tooltip. */
function bars(svg: string): Map<string, { y: number; height: number }> {
  const out = new Map<string, { y: number; height: number }>();
  for (const m of svg.matchAll(/<rect x="[\d.]+" y="([\d.]+)" width="[\d.]+" height="([\d.]+)" fill="[^"]+"><title>([^:]+):/g))
    out.set(m[3]!, { y: Number(m[1]), height: Number(m[2]) });
  return out;
}

describe('renderBarChart', () => {
  const svg = renderBarChart(chartsFor(fuseRecord, full)[0]!);
  it('is a standalone SVG document with one bar per competitor value and a legend', () => {
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trim().endsWith('</svg>')).toBe(true);
    expect(svg.match(/<rect [^>]*><title>/g)).toHaveLength(4);
    expect(svg).toContain('MB/s (higher is better)');
    expect(svg).not.toContain('limit');
  });
  it('draws the reference as a dashed line at its value in each group, not as a bar', () => {
    const lines = [...svg.matchAll(/<line class="reference" [^>]*y1="([\d.]+)" y2="([\d.]+)"[^>]*stroke-dasharray/g)];
    expect(lines).toHaveLength(2);
    expect(svg).not.toMatch(/<rect [^>]*><title>sdk-alone/);
    expect(svg).toContain('<title>sdk-alone (reference), 1000×1MB: 42.0 MB/s</title>');
    expect(svg).toContain('>sdk-alone (reference)</text>');
    // The line sits where a bar of the same value would end: estuary's 21 is half of 42.
    const b = bars(svg).get('estuary, 1000×1MB')!;
    const base = b.y + b.height;
    const lineY = Number(lines[0]![1]);
    expect((base - lineY) / b.height).toBeCloseTo(42 / 21, 1);
    // estuary's 85 MB/s on 1×1000MB is above the reference's 50: its bar reaches past the line.
    const big = bars(svg).get('estuary, 1×1000MB')!;
    expect(big.y).toBeLessThan(Number(lines[1]![1]));
  });
  it('writes each median on its bar', () => {
    const labels = [...svg.matchAll(/<text class="value"[^>]*>([^<]+)<\/text>/g)].map((m) => m[1]);
    expect(labels).toEqual(['21.0', '11.0', '85.0', '50.0']);
  });
  it('draws a whisker from the slowest to the fastest run', () => {
    expect(svg.match(/<line [^>]*stroke="#333"\/>/g)!.length).toBeGreaterThanOrEqual(3);
  });
  it('bars are as tall as their value on a scale starting at zero', () => {
    const b = bars(svg);
    expect(b.get('estuary, 1000×1MB')!.height / b.get('s3fs, 1000×1MB')!.height).toBeCloseTo(21 / 11, 2);
  });
  it('carries the --quick or single-run caveat under the title', () => {
    const quick = renderBarChart(chartsFor(fuseRecord, { quick: true })[0]!);
    expect(quick).toMatch(/<text class="caveat"[^>]*>--quick run: reduced sizes, a smoke test, not a measurement/);
    const single = renderBarChart(chartsFor(fuseRecord, full)[3]!);
    expect(single).not.toContain('single run');
    expect(svg).toMatch(/<text class="caveat"[^>]*>median of 3 runs, whiskers min–max</);
  });
});

describe('category labels', () => {
  it('break onto two lines when they would run into the next group', () => {
    const chart = chartsFor(fuseRecord, full)[3]!;
    const many = { ...chart, categories: ['create 100 in parallel', 'b', 'c', 'd', 'e', 'f'] };
    expect(renderBarChart(many)).toMatch(/<tspan [^>]*>create 100<\/tspan><tspan [^>]*dy="14">in parallel<\/tspan>/);
    expect(renderBarChart(chart)).toContain('>ls -l 1000 files</text>');
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
