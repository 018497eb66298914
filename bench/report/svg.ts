// Grouped bar charts as standalone SVG, in the manner of the KEK paper's Figures 3 and 4: one
// group of bars per dataset (or case), one bar per peer, the value on the y axis from zero, with
// a thin whisker from the lowest to the highest run. No dependencies; pure string building.

import { formatNumber } from '../stats.ts';
import type { ChartSpec } from './charts.ts';

// Colour-blind-safe palette (Okabe–Ito), in peer order.
const COLOURS = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#F0E442', '#000000'];

const WIDTH = 760;
const HEIGHT = 380;
const MARGIN = { top: 40, right: 20, bottom: 70, left: 70 };

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A round axis maximum and tick step covering `max`: 1, 2 or 5 times a power of ten per tick. */
export function niceScale(max: number, ticks = 5): { top: number; step: number } {
  if (!(max > 0)) return { top: 1, step: 0.2 };
  const raw = max / ticks;
  const pow = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((k) => k * pow).find((s) => s >= raw)!;
  return { top: Math.ceil(max / step) * step, step };
}

/** Axis labels without float noise or needless decimals: 0.15, 40, 1,000. */
export function tickLabel(v: number): string {
  return Number(v.toPrecision(6)).toLocaleString('en-US', { maximumFractionDigits: 6 });
}

export function renderBarChart(chart: ChartSpec): string {
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const values = chart.series
    .flatMap((s) => [...s.maxs, ...s.medians])
    .filter((v): v is number => v !== null);
  const { top, step } = niceScale(Math.max(0, ...values));
  const y = (v: number) => MARGIN.top + plotH - (v / top) * plotH;
  const groupW = plotW / Math.max(1, chart.categories.length);
  const barW = (groupW * 0.8) / Math.max(1, chart.series.length);
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
  );
  out.push(`<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`);
  out.push(
    `<text x="${WIDTH / 2}" y="22" text-anchor="middle" font-size="15">${escapeXml(chart.title)}</text>`,
  );
  for (let v = 0; v <= top + step / 2; v += step) {
    const yy = y(v).toFixed(1);
    out.push(`<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${yy}" y2="${yy}" stroke="#ddd"/>`);
    out.push(
      `<text x="${MARGIN.left - 6}" y="${yy}" dy="4" text-anchor="end">${escapeXml(tickLabel(v))}</text>`,
    );
  }
  const unitLabel = `${chart.unit} (${chart.higherIsBetter ? 'higher' : 'lower'} is better)`;
  out.push(
    `<text transform="translate(18 ${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle">${escapeXml(unitLabel)}</text>`,
  );
  chart.categories.forEach((cat, ci) => {
    const gx = MARGIN.left + ci * groupW + groupW * 0.1;
    chart.series.forEach((s, si) => {
      const v = s.medians[ci];
      if (v === null || v === undefined) return;
      const x = gx + si * barW;
      const colour = COLOURS[si % COLOURS.length];
      out.push(
        `<rect x="${x.toFixed(1)}" y="${y(v).toFixed(1)}" width="${(barW * 0.9).toFixed(1)}" height="${(y(0) - y(v)).toFixed(1)}" fill="${colour}"><title>${escapeXml(`${s.peer}, ${cat}: ${formatNumber(v)} ${chart.unit}`)}</title></rect>`,
      );
      const lo = s.mins[ci];
      const hi = s.maxs[ci];
      if (lo !== null && lo !== undefined && hi !== null && hi !== undefined && hi > lo) {
        const cx = (x + barW * 0.45).toFixed(1);
        out.push(
          `<line x1="${cx}" x2="${cx}" y1="${y(lo).toFixed(1)}" y2="${y(hi).toFixed(1)}" stroke="#333"/>`,
        );
      }
    });
    out.push(
      `<text x="${(MARGIN.left + (ci + 0.5) * groupW).toFixed(1)}" y="${MARGIN.top + plotH + 18}" text-anchor="middle">${escapeXml(cat)}</text>`,
    );
  });
  out.push(
    `<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${y(0)}" y2="${y(0)}" stroke="#333"/>`,
  );
  let lx = MARGIN.left;
  chart.series.forEach((s, si) => {
    const ly = HEIGHT - 22;
    out.push(
      `<rect x="${lx}" y="${ly - 10}" width="12" height="12" fill="${COLOURS[si % COLOURS.length]}"/>`,
    );
    out.push(`<text x="${lx + 16}" y="${ly}">${escapeXml(s.peer)}</text>`);
    // About 7 px per character at 12 px sans-serif, plus the swatch and a gap.
    lx += 16 + s.peer.length * 7 + 18;
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
