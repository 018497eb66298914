// Line charts of quantities over time as standalone SVG, for scenarios that record a course
// rather than repeated samples: the coordinator's jobs by state (KEK's Figure 8: pending, running
// at home, running in the cloud) and its dollars spent, one chart per scenario and policy. Same
// palette and axis rules as the bar charts; pure string building.

import { escapeXml, niceScale, tickLabel } from './svg.ts';

export interface Series {
  /** File name without .svg, unique in the run. */
  readonly id: string;
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  /** Shared x values, and one named line of y values of the same length each. */
  readonly x: readonly number[];
  readonly lines: readonly { readonly name: string; readonly y: readonly number[] }[];
}

const COLOURS = ['#E69F00', '#0072B2', '#009E73', '#CC79A7', '#56B4E9', '#D55E00'];
const W = 760;
const H = 360;
const M = { top: 48, right: 150, bottom: 50, left: 70 };

/** Keeps at most `max` points, evenly spaced, always the last: a day at 30 s is 2,880 points. */
export function thin<T>(points: readonly T[], max = 400): T[] {
  if (points.length <= max) return [...points];
  const step = points.length / max;
  const out: T[] = [];
  for (let i = 0; i < max; i++) out.push(points[Math.floor(i * step)]!);
  out.push(points[points.length - 1]!);
  return out;
}

export function renderLineChart(s: Series): string {
  const xMax = Math.max(1e-9, ...s.x);
  const yScale = niceScale(Math.max(0, ...s.lines.flatMap((l) => l.y)));
  const xScale = niceScale(xMax);
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const px = (v: number) => M.left + (v / xScale.top) * pw;
  const py = (v: number) => M.top + ph - (v / yScale.top) * ph;
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`];
  out.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  out.push(`<text x="${W / 2}" y="24" text-anchor="middle" font-size="15">${escapeXml(s.title)}</text>`);
  for (let v = 0; v <= yScale.top + 1e-9; v += yScale.step)
    out.push(`<line x1="${M.left}" x2="${M.left + pw}" y1="${py(v)}" y2="${py(v)}" stroke="#ddd"/><text x="${M.left - 6}" y="${py(v) + 4}" text-anchor="end">${tickLabel(v)}</text>`);
  for (let v = 0; v <= xScale.top + 1e-9; v += xScale.step)
    out.push(`<text x="${px(v)}" y="${M.top + ph + 18}" text-anchor="middle">${tickLabel(v)}</text>`);
  out.push(`<line x1="${M.left}" x2="${M.left + pw}" y1="${M.top + ph}" y2="${M.top + ph}" stroke="#333"/>`);
  out.push(`<text x="${M.left + pw / 2}" y="${H - 10}" text-anchor="middle">${escapeXml(s.xLabel)}</text>`);
  out.push(`<text transform="translate(16 ${M.top + ph / 2}) rotate(-90)" text-anchor="middle">${escapeXml(s.yLabel)}</text>`);
  s.lines.forEach((line, i) => {
    const colour = COLOURS[i % COLOURS.length]!;
    const d = line.y.map((y, k) => `${k === 0 ? 'M' : 'L'}${px(s.x[k]!).toFixed(1)},${py(y).toFixed(1)}`).join('');
    out.push(`<path d="${d}" fill="none" stroke="${colour}" stroke-width="2"/>`);
    const ly = M.top + 14 + i * 18;
    out.push(`<line x1="${W - M.right + 12}" x2="${W - M.right + 32}" y1="${ly - 4}" y2="${ly - 4}" stroke="${colour}" stroke-width="3"/><text x="${W - M.right + 38}" y="${ly}">${escapeXml(line.name)}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
