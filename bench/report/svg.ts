// Grouped bar charts as standalone SVG, in the manner of the KEK paper's Figures 3 and 4: one
// group of bars per dataset (or case), one bar per peer with its median written on it, the value
// on the y axis from zero, a thin whisker from the lowest to the highest run, and the reference
// peer as a dashed line across the group rather than as one more competitor. A chart from a
// --quick or single run carries that under its title, so a copied PNG cannot lose it. No
// dependencies; pure string building.

import { formatNumber } from '../stats.ts';
import { referenceLabel, type ChartSpec } from './chart-spec.ts';

// Colour-blind-safe palette (Okabe–Ito), in peer order.
const COLOURS = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#F0E442', '#000000'];

const WIDTH = 760;
const HEIGHT = 400;
const MARGIN = { top: 56, right: 20, bottom: 84, left: 70 };
/** Room above the tallest bar for its value label (rotated labels on narrow bars need the most). */
const HEADROOM = 1.2;
/** Narrower bars than this (px) get their value written upwards, as 12 px digits would overlap. */
const NARROW_BAR = 30;

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

function present(v: number | null | undefined): v is number {
  return v !== null && v !== undefined;
}

/** A white outline under the glyphs keeps a label readable where it crosses a line or whisker. */
const HALO = 'stroke="white" stroke-width="3" paint-order="stroke"';

/** The median on top of its bar, upright on wide bars and rotated on narrow ones. */
function valueLabel(x: number, width: number, top: number, v: number): string {
  const cx = x + width / 2;
  const text = escapeXml(formatNumber(v));
  if (width >= NARROW_BAR)
    return `<text class="value" x="${cx.toFixed(1)}" y="${(top - 4).toFixed(1)}" text-anchor="middle" font-size="10" ${HALO}>${text}</text>`;
  const y = (top - 4).toFixed(1);
  return `<text class="value" x="${cx.toFixed(1)}" y="${y}" dy="3" transform="rotate(-90 ${cx.toFixed(1)} ${y})" font-size="10" ${HALO}>${text}</text>`;
}

export function renderBarChart(chart: ChartSpec): string {
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const ref = chart.reference;
  const values = [...chart.series, ...(ref ? [ref] : [])]
    .flatMap((s) => [...s.maxs, ...s.medians])
    .filter(present);
  const { top, step } = niceScale(Math.max(0, ...values) * HEADROOM);
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
  const runs = chart.runs > 1 ? `median of ${chart.runs} runs, whiskers min–max` : undefined;
  const subtitle = [chart.caveat, runs].filter(Boolean).join(' · ');
  if (subtitle)
    out.push(
      `<text class="caveat" x="${WIDTH / 2}" y="40" text-anchor="middle" font-size="12" fill="${chart.caveat ? '#B00020' : '#555'}">${escapeXml(subtitle)}</text>`,
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
    // Labels go on last, above the whiskers and the reference line.
    const labels: string[] = [];
    chart.series.forEach((s, si) => {
      const v = s.medians[ci];
      if (!present(v)) return;
      const x = gx + si * barW;
      const colour = COLOURS[si % COLOURS.length];
      out.push(
        `<rect x="${x.toFixed(1)}" y="${y(v).toFixed(1)}" width="${(barW * 0.9).toFixed(1)}" height="${(y(0) - y(v)).toFixed(1)}" fill="${colour}"><title>${escapeXml(`${s.peer}, ${cat}: ${formatNumber(v)} ${chart.unit}`)}</title></rect>`,
      );
      const lo = s.mins[ci];
      const hi = s.maxs[ci];
      const cx = (x + barW * 0.45).toFixed(1);
      if (present(lo) && present(hi) && hi > lo)
        out.push(`<line x1="${cx}" x2="${cx}" y1="${y(lo).toFixed(1)}" y2="${y(hi).toFixed(1)}" stroke="#333"/>`);
      labels.push(valueLabel(x, barW * 0.9, y(v), v));
    });
    const r = ref?.medians[ci];
    if (ref && present(r)) {
      const yy = y(r).toFixed(1);
      out.push(
        `<line class="reference" x1="${(gx - groupW * 0.05).toFixed(1)}" x2="${(gx + groupW * 0.85).toFixed(1)}" y1="${yy}" y2="${yy}" stroke="#000" stroke-width="2" stroke-dasharray="6 4"><title>${escapeXml(`${referenceLabel(ref.peer)}, ${cat}: ${formatNumber(r)} ${chart.unit}`)}</title></line>`,
      );
      out.push(
        `<text class="reference-value" x="${(gx - groupW * 0.06).toFixed(1)}" y="${yy}" dy="3" text-anchor="end" font-size="10" font-style="italic" ${HALO}>${escapeXml(formatNumber(r))}</text>`,
      );
    }
    out.push(...labels);
    out.push(categoryLabel(cat, MARGIN.left + (ci + 0.5) * groupW, MARGIN.top + plotH + 18, groupW));
  });
  out.push(
    `<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${y(0)}" y2="${y(0)}" stroke="#333"/>`,
  );
  out.push(...legend(chart));
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/** A case name under its group, on two lines when one would run into the next group's. */
function categoryLabel(text: string, x: number, y: number, groupW: number): string {
  const at = `x="${x.toFixed(1)}" y="${y}" text-anchor="middle"`;
  // About 7 px per character at 12 px sans-serif.
  const space = text.lastIndexOf(' ', Math.ceil(text.length / 2));
  if (text.length * 7 < groupW - 4 || space < 0) return `<text ${at}>${escapeXml(text)}</text>`;
  const lines = [text.slice(0, space), text.slice(space + 1)];
  return `<text ${at}>${lines.map((l, i) => `<tspan x="${x.toFixed(1)}" dy="${i === 0 ? 0 : 14}">${escapeXml(l)}</tspan>`).join('')}</text>`;
}

function legend(chart: ChartSpec): string[] {
  const out: string[] = [];
  const ly = HEIGHT - 22;
  let lx = MARGIN.left;
  chart.series.forEach((s, si) => {
    out.push(
      `<rect x="${lx}" y="${ly - 10}" width="12" height="12" fill="${COLOURS[si % COLOURS.length]}"/>`,
    );
    out.push(`<text x="${lx + 16}" y="${ly}">${escapeXml(s.peer)}</text>`);
    // About 7 px per character at 12 px sans-serif, plus the swatch and a gap.
    lx += 16 + s.peer.length * 7 + 18;
  });
  if (chart.reference) {
    out.push(
      `<line x1="${lx}" x2="${lx + 22}" y1="${ly - 4}" y2="${ly - 4}" stroke="#000" stroke-width="2" stroke-dasharray="6 4"/>`,
    );
    out.push(`<text x="${lx + 26}" y="${ly}">${escapeXml(referenceLabel(chart.reference.peer))}</text>`);
  }
  return out;
}
