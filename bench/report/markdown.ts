// report.md: the run's settings, then per scenario the peers (with why any was skipped or failed),
// one table per chart family — median, spread, and the ratios to the baseline and the limit —
// with its SVG chart, and the notes. Pure: returns text; the writer puts it on disk.

import type { Results, ScenarioRecord } from '../results.ts';
import { formatNumber } from '../stats.ts';
import { chartId, chartsFor, splitCase } from './charts.ts';

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
    s.peers.map((p) => [p.peer, p.status, (p.status === 'ok' ? p.version : p.reason) ?? '']),
    true,
  );
}

function valueCell(m: ScenarioRecord['measurements'][number] | undefined): string {
  if (!m || m.summary.median === null) return '–';
  const spread = m.summary.n > 1 ? ` ±${Math.round(m.summary.spreadPct / 2)}%` : '';
  return `${formatNumber(m.summary.median)}${spread}`;
}

function ratioCell(m: ScenarioRecord['measurements'][number] | undefined, s: ScenarioRecord): string {
  if (!m) return '–';
  const parts: string[] = [];
  if (m.vsBaseline !== undefined) parts.push(`${m.vsBaseline.toFixed(2)}× ${s.baseline}`);
  if (m.ofLimit !== undefined) parts.push(`${Math.round(m.ofLimit * 100)}% of limit`);
  return parts.join(', ') || (m.peer === s.baseline ? 'baseline' : m.peer === s.limit ? 'limit' : '–');
}

export function scenarioSection(s: ScenarioRecord, chartFile: (id: string) => string): string {
  const out: string[] = [`## ${s.scenario}`, ''];
  if (s.status === 'failed') out.push(`**The scenario failed:** ${s.error}`, '');
  out.push(peersTable(s), '');
  for (const chart of chartsFor(s)) {
    const peers = chart.series.map((x) => x.peer);
    const find = (category: string, peer: string) =>
      s.measurements.find(
        (m) =>
          m.peer === peer &&
          splitCase(m.case, m.unit).category === category &&
          caseInChart(m.case, m.unit, chart.id, s.scenario),
      );
    out.push(
      `### ${chart.title}`,
      '',
      `Median of ${maxRuns(s)} run(s) in ${chart.unit}, ± half the min–max spread.`,
      '',
    );
    out.push(
      table(
        ['case', ...peers],
        chart.categories.map((c) => [c, ...peers.map((p) => valueCell(find(c, p)))]),
      ),
      '',
    );
    const withRatios = chart.categories.map((c) => [c, ...peers.map((p) => ratioCell(find(c, p), s))]);
    if (s.baseline || s.limit)
      out.push(
        'Ratios (above 1× is better than the baseline):',
        '',
        table(['case', ...peers], withRatios),
        '',
      );
    out.push(`![${chart.title}](${chartFile(chart.id)})`, '');
  }
  if (s.notes.length > 0) out.push('Notes:', '', ...s.notes.map((n) => `- ${n}`), '');
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

function caseInChart(c: string, unit: string, id: string, scenario: string): boolean {
  return id === chartId(scenario, splitCase(c, unit).family);
}

function maxRuns(s: ScenarioRecord): number {
  return Math.max(0, ...s.measurements.map((m) => m.summary.n));
}

export function renderReport(r: Results, chartFile: (id: string) => string): string {
  const net = r.settings.network;
  const out = [
    `# estuary bench: ${r.settings.scenarios.join(', ')}`,
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
  for (const s of r.scenarios) out.push(scenarioSection(s, chartFile));
  return out.join('\n');
}
