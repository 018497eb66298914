// The paragraph at the top of report.md: what kind of run this was, then for each scenario how
// estuary compared with the tool it replaces (and with the reference), in words that carry their
// direction, and whether the machine was busy. A reader who stops after it has the headline. Pure.

import { metricOf } from '../metrics.ts';
import type { Results, ScenarioRecord } from '../results.ts';
import { formatNumber } from '../stats.ts';
import { splitCase } from './charts.ts';
import { ratioRange } from './ratio.ts';

/** The peer the headline speaks for. */
const SUBJECT = 'estuary';

/** Families summarised as one range over their datasets; other cases are named one by one. */
const FAMILY_SHORT: Record<string, string> = {
  'fuse/cp up': 'upload speed',
  'fuse/cp down': 'download speed',
  'fuse/seconds': 'metadata operations',
  'fuse/cpu up': 'mount CPU uploading',
  'fuse/cpu down': 'mount CPU downloading',
  'fuse/rss up': 'peak memory uploading',
  'fuse/rss down': 'peak memory downloading',
};

type Measured = ScenarioRecord['measurements'][number];

/** "upload speed 1.4×–6.8× faster; …" for one scenario and one ratio field, or undefined. */
function phrases(s: ScenarioRecord, ratio: (m: Measured) => number | undefined): string | undefined {
  const groups = new Map<string, Measured[]>();
  for (const m of s.measurements) {
    if (m.peer !== SUBJECT || ratio(m) === undefined) continue;
    const { family } = splitCase(m.case, m.unit);
    const label = FAMILY_SHORT[`${s.scenario}/${family}`] ?? m.case;
    groups.set(label, [...(groups.get(label) ?? []), m]);
  }
  // Speeds first, then what they cost (FAMILY_SHORT's order), then cases in measured order.
  const labels = Object.values(FAMILY_SHORT);
  const rank = (label: string) => (labels.includes(label) ? labels.indexOf(label) : labels.length);
  const sorted = [...groups.entries()].sort(([a], [b]) => rank(a) - rank(b));
  const parts = sorted.flatMap(([label, ms]) => {
    const words = ratioRange(
      ms.map((m) => ratio(m)!),
      metricOf(ms[0]!),
    );
    return words ? [`${label} ${words}`] : [];
  });
  return parts.length > 0 ? parts.join('; ') : undefined;
}

function scenarioSentence(s: ScenarioRecord): string {
  if (s.status === 'failed') return `**${s.scenario}** failed: ${s.error ?? 'see its section'}.`;
  const vsBase = s.baseline ? phrases(s, (m) => m.vsBaseline) : undefined;
  const vsRef = s.reference ? phrases(s, (m) => m.vsReference) : undefined;
  const out: string[] = [];
  if (vsBase) out.push(`**${s.scenario}**, ${SUBJECT} against ${s.baseline}: ${vsBase}.`);
  if (vsRef) out.push(`Against ${s.reference} (reference, not a competitor): ${vsRef}.`);
  if (out.length > 0) return out.join(' ');
  const missing = s.peers.filter((p) => p.status !== 'ok').map((p) => `${p.peer} ${p.status}`);
  const why = s.baseline
    ? `its baseline ${s.baseline} was not measured next to ${SUBJECT}`
    : 'it has no peer to compare with';
  const measured = [...new Set(s.measurements.map((m) => m.peer))];
  const others = measured.filter((p) => p !== SUBJECT);
  // A case may measure estuary under other names only (the gateway's estuary-w1, estuary-w2).
  const then = !others.length
    ? 'its figures stand alone'
    : measured.includes(SUBJECT)
      ? `its tables show ${SUBJECT} beside ${others.join(', ')}`
      : `its tables show ${others.join(', ')}`;
  return `**${s.scenario}**: ${why}${missing.length ? ` (${missing.join(', ')})` : ''}; ${then}.`;
}

function runKind(r: Results): string {
  if (r.settings.quick) return 'A `--quick` run: reduced sizes, a smoke test, not a measurement.';
  const runs = Math.max(0, ...r.scenarios.flatMap((s) => s.measurements.map((m) => m.summary.n)));
  if (runs <= 1) return 'A single run: one sample per figure, no spread.';
  return `Medians of ${runs} runs, peers taking turns within every run.`;
}

/** The warning a run on a busy machine carries; undefined when it was not busy at the start. */
export function busyWarning(r: Results): string | undefined {
  const start = r.load?.start[0];
  if (start === undefined || start <= r.machine.cpus) return undefined;
  const end = r.load?.end[0];
  return (
    `**Busy machine:** the 1-minute load average was ${formatNumber(start)} at the start` +
    `${end === undefined ? '' : ` and ${formatNumber(end)} at the end`}, above its ${r.machine.cpus} cores: ` +
    'other work competed with the peers, so absolute figures are low and spreads wide; ratios suffer less where the peers took turns.'
  );
}

export function summaryParagraph(r: Results): string {
  const parts = [runKind(r), ...r.scenarios.map(scenarioSentence)];
  if (busyWarning(r)) parts.push(`The machine was busy (load above its ${r.machine.cpus} cores).`);
  if (r.interrupted) parts.push('The run was interrupted; it holds what was measured before.');
  return `**Summary.** ${parts.join(' ')}`;
}

/** Cases whose peers did not take turns, as the runner checked them; empty when all did. */
export function interleavingProblems(r: Results): string[] {
  return r.scenarios.flatMap((s) => (s.interleaving?.problems ?? []).map((p) => `${s.scenario}: ${p}`));
}
