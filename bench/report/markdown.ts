// report.md: the title, any warning a reader must see first (busy machine, peers not taking
// turns), a one-paragraph summary with the headline ratios, the run's settings and load, then
// per scenario the peers (with why any was skipped or failed), how the figures were taken, and one
// table per chart family — medians with their spread, then the ratios to the baseline and to the
// reference written with their direction ("7.2× more memory") — with its SVG chart, the notes and
// the settings. Pure: returns text; the writer puts it on disk.

import { metricOf } from '../metrics.ts';
import type { LoadRecord, Results, ScenarioRecord } from '../results.ts';
import { formatNumber } from '../stats.ts';
import { chartsFor, referenceLabel, splitCase, type ChartSpec } from './charts.ts';
import { ratioWords } from './ratio.ts';
import { busyWarning, interleavingProblems, summaryParagraph } from './summary.ts';

type Measured = ScenarioRecord['measurements'][number];

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** Numbers align right; `text` tables (settings, peers) align left. */
function table(head: readonly string[], rows: readonly (readonly string[])[], text = false): string {
  const align = (i: number) => (i === 0 || text ? '---' : '---:');
  const lines = [`| ${head.map(cell).join(' | ')} |`, `|${head.map((_, i) => align(i)).join('|')}|`];
  for (const r of rows) lines.push(`| ${r.map(cell).join(' | ')} |`);
  return lines.join('\n');
}

function peersTable(s: ScenarioRecord): string {
  return table(
    ['peer', 'status', 'version or reason'],
    s.peers.map((p) => [
      p.peer === s.reference ? referenceLabel(p.peer) : p.peer,
      p.status,
      (p.status === 'ok' ? p.version : p.reason) ?? '',
    ]),
    true,
  );
}

function valueCell(m: Measured | undefined): string {
  if (!m || m.summary.median === null) return '–';
  const spread = m.summary.n > 1 ? ` ±${Math.round(m.summary.spreadPct / 2)}%` : '';
  return `${formatNumber(m.summary.median)}${spread}`;
}

/** "7.2× more memory", or what the peer is when it has no ratio. */
function ratioCell(m: Measured | undefined, timesBetter: number | undefined, self: string): string {
  if (!m || m.summary.median === null) return '–';
  if (m.peer === self) return '(itself)';
  return timesBetter === undefined ? '–' : ratioWords(timesBetter, metricOf(m));
}

export function loadText(load: LoadRecord | undefined, cpus?: number): string {
  if (!load) return 'not recorded';
  const f = (l: readonly number[]) => l.map((x) => x.toFixed(2)).join(' ');
  return `start ${f(load.start)}, end ${f(load.end)} (1, 5, 15 min)${cpus ? ` on ${cpus} cores` : ''}`;
}

function methodLines(s: ScenarioRecord): string[] {
  const runs = Math.max(0, ...s.measurements.map((m) => m.summary.n));
  const peers = new Set(s.measurements.map((m) => m.peer)).size;
  const order =
    peers < 2
      ? 'one peer, so nothing to interleave'
      : s.interleaving && s.interleaving.problems.length > 0
        ? `**peers did NOT take turns** in ${s.interleaving.problems.length} case(s): ${s.interleaving.problems.join('; ')}`
        : 'peers took turns within every run (A, B, C, then again), checked from the order the samples arrived';
  return [
    ...s.method,
    `Each figure is the median of up to ${runs} run(s), ± half the min–max spread; ${order}.`,
    `Load average during this scenario: ${loadText(s.load)}.`,
  ];
}

function chartTables(s: ScenarioRecord, chart: ChartSpec, chartFile: (id: string) => string): string[] {
  const inChart = s.measurements.filter((m) => splitCase(m.case, m.unit).family === chart.family);
  const find = (category: string, peer: string) =>
    inChart.find((m) => m.peer === peer && splitCase(m.case, m.unit).category === category);
  const peers = [...chart.series.map((x) => x.peer), ...(chart.reference ? [chart.reference.peer] : [])];
  const head = (p: string) => (p === s.reference ? referenceLabel(p) : p);
  const out = [
    `### ${chart.title}`,
    '',
    `Median of ${chart.runs} run(s) in ${chart.unit} (${chart.higherIsBetter ? 'higher' : 'lower'} is better), ± half the min–max spread.${chart.caveat ? ` **${chart.caveat}.**` : ''}`,
    '',
    table(
      ['case', ...peers.map(head)],
      chart.categories.map((c) => [c, ...peers.map((p) => valueCell(find(c, p)))]),
    ),
    '',
  ];
  const ratioTable = (self: string, pick: (m: Measured) => number | undefined, caption: string) => {
    const others = peers.filter((p) => p !== self);
    const rows = chart.categories.map((c) => [
      c,
      ...others.map((p) => ratioCell(find(c, p), find(c, p) ? pick(find(c, p)!) : undefined, self)),
    ]);
    if (rows.every((r) => r.slice(1).every((x) => x === '–'))) return;
    out.push(caption, '', table(['case', ...others.map(head)], rows), '');
  };
  if (s.baseline)
    ratioTable(s.baseline, (m) => m.vsBaseline, `Compared with ${s.baseline}, the baseline (each peer's median against ${s.baseline}'s):`);
  if (s.reference)
    ratioTable(
      s.reference,
      (m) => m.vsReference,
      `Compared with ${referenceLabel(s.reference)}, a yardstick rather than a bound:`,
    );
  out.push(`![${chart.title}](${chartFile(chart.id)})`, '');
  return out;
}

export function scenarioSection(
  s: ScenarioRecord,
  chartFile: (id: string) => string,
  run: { readonly quick: boolean } = { quick: false },
): string {
  const out: string[] = [`## ${s.scenario}`, ''];
  if (s.status === 'failed') out.push(`**The scenario failed:** ${s.error}`, '');
  out.push(peersTable(s), '');
  out.push('How the figures were taken:', '', ...methodLines(s).map((l) => `- ${l}`), '');
  for (const chart of chartsFor(s, run)) out.push(...chartTables(s, chart, chartFile));
  if (s.notes.length > 0) out.push('Notes:', '', ...s.notes.map((n) => `- ${n}`), '');
  for (const series of s.series ?? []) out.push(`![${series.title}](${chartFile(series.id)})`, '');
  out.push(
    '<details><summary>settings</summary>',
    '',
    '```json',
    JSON.stringify(s.settings, null, 2),
    '```',
    '',
    '</details>',
    '',
  );
  return out.join('\n');
}

function warnings(r: Results): string[] {
  const out: string[] = [];
  const busy = busyWarning(r);
  if (busy) out.push(busy, '');
  const problems = interleavingProblems(r);
  if (problems.length > 0)
    out.push(
      `**Peers did not take turns** in ${problems.length} case(s), so a background job may have landed on one column: ${problems.join('; ')}.`,
      '',
    );
  return out;
}

export function renderReport(r: Results, chartFile: (id: string) => string): string {
  const net = r.settings.network;
  const out = [
    `# estuary bench: ${r.settings.scenarios.join(', ')}`,
    '',
    ...warnings(r),
    summaryParagraph(r),
    '',
    `Started ${r.startedAt}, finished ${r.finishedAt}${r.interrupted ? ' (interrupted)' : ''}.`,
    '',
    table(
      ['setting', 'value'],
      [
        [
          'machine',
          `${r.machine.cpus} × ${r.machine.cpuModel}, ${formatNumber(r.machine.memoryBytes / 2 ** 30)} GiB, ${r.machine.os} ${r.machine.kernel}`,
        ],
        ['load average', loadText(r.load, r.machine.cpus)],
        [
          'versions',
          // Peer versions are in each scenario's peer table; here only what all scenarios share.
          Object.entries(r.versions)
            .filter(([k]) => !k.includes('/'))
            .map(([k, v]) => `${k} ${v}`)
            .join(', '),
        ],
        [
          'network',
          `${net.name} (RTT ${net.rttMs} ms, ${net.bandwidthBps ? `${net.bandwidthBps / 1e6} Mbit/s` : 'no rate limit'})`,
        ],
        ['backend', r.settings.endpoint ? `endpoint ${r.settings.endpoint}` : r.settings.backend],
        ['mode', r.settings.quick ? 'quick (reduced sizes: a smoke test, not a measurement)' : 'full'],
      ],
      true,
    ),
    '',
  ];
  for (const s of r.scenarios) out.push(scenarioSection(s, chartFile, { quick: r.settings.quick }));
  return out.join('\n');
}
