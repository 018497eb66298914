// Jobs by state over time, drawn as KEK's Figure 8 draws its hybrid queue: pending, running on
// the site's own nodes, running in the cloud (and the drones that were up). Plain SVG, no script.
// Pure: points in, text out.

import type { TimelinePoint } from '../coordinator.ts';

const W = 720;
const H = 360;
const M = { left: 56, right: 180, top: 36, bottom: 44 };

const SERIES = [
  { key: 'pending', label: 'pending', colour: '#d95f02', dash: '' },
  { key: 'home', label: 'running at home', colour: '#1b5e9e', dash: '' },
  { key: 'drones', label: 'running in the cloud', colour: '#1b9e77', dash: '' },
  { key: 'live', label: 'drones up', colour: '#777777', dash: '4 3' },
] as const;

/** A round step for about `n` ticks over [0, max], never below `least` (1 for counts of jobs). */
export function step(max: number, n: number, least = 0): number {
  const raw = Math.max(max, 1) / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  return Math.max(least, [1, 2, 5, 10].map((k) => k * mag).find((s) => s >= raw) ?? raw);
}

/** Tick values 0, s, 2s … up to max, as the numbers they are: i × s, not a sum of s that drifts. */
export function ticks(max: number, s: number): number[] {
  const out: number[] = [];
  for (let i = 0; i * s <= max + 1e-9; i++) out.push(Number((i * s).toPrecision(12)));
  return out;
}

export function timelineSvg(points: readonly TimelinePoint[], title = 'Jobs by state over time'): string {
  const t0 = points[0]?.at ?? 0;
  const span = Math.max(1, ((points[points.length - 1]?.at ?? 0) - t0) / 1000);
  const top = Math.max(1, ...points.flatMap((p) => [p.pending, p.home, p.drones, p.live]));
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const x = (at: number) => M.left + (((at - t0) / 1000) / span) * pw;
  const y = (v: number) => M.top + ph - (v / top) * ph;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${M.left}" y="20" font-size="14" font-weight="bold">${title.replace(/[<&>]/g, '')}</text>`,
  ];
  for (const v of ticks(top, step(top, 5, 1)))
    parts.push(
      `<line x1="${M.left}" x2="${M.left + pw}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#eee"/>`,
      `<text x="${M.left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${v}</text>`,
    );
  for (const s of ticks(span, step(span, 6)))
    parts.push(`<text x="${x(t0 + s * 1000).toFixed(1)}" y="${H - M.bottom + 16}" text-anchor="middle">${s}</text>`);
  parts.push(
    `<line x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${M.top + ph}" stroke="black"/>`,
    `<line x1="${M.left}" x2="${M.left + pw}" y1="${M.top + ph}" y2="${M.top + ph}" stroke="black"/>`,
    `<text x="${M.left + pw / 2}" y="${H - 8}" text-anchor="middle">time since the first point (s)</text>`,
    `<text transform="translate(16 ${M.top + ph / 2}) rotate(-90)" text-anchor="middle">jobs</text>`,
  );
  for (const [i, s] of SERIES.entries()) {
    if (points.length > 0) {
      // A step line: each count holds until the next interval's.
      let d = `M${x(points[0]!.at).toFixed(1)},${y(points[0]![s.key]).toFixed(1)}`;
      for (let k = 1; k < points.length; k++)
        d += ` H${x(points[k]!.at).toFixed(1)} V${y(points[k]![s.key]).toFixed(1)}`;
      parts.push(`<path class="series-${s.key}" d="${d}" fill="none" stroke="${s.colour}" stroke-width="2"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''}/>`);
    }
    const ly = M.top + 10 + i * 18;
    parts.push(
      `<line x1="${W - M.right + 10}" x2="${W - M.right + 30}" y1="${ly}" y2="${ly}" stroke="${s.colour}" stroke-width="2"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''}/>`,
      `<text x="${W - M.right + 36}" y="${ly + 4}">${s.label}</text>`,
    );
  }
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
