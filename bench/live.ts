// What a person watching a run sees on stdout. On a terminal: a progress bar for the current
// scenario and a live table of medians so far, redrawn in place. Elsewhere (CI logs, pipes): one
// plain line per progress step and per sample, so a log reads as a transcript. Logs stay on
// stderr; this is the command's own output.

import { METRICS } from './metrics.ts';
import type { SampleEvent } from './samples.ts';
import { formatNumber, median } from './stats.ts';

export interface LiveOutput {
  readonly isTTY: boolean;
  readonly columns: number;
  write(text: string): void;
}

/** "(12/96) s3fs: cp up …" → [12, 96]. Scenarios that count their steps get a bar. */
export function stepOf(line: string): [number, number] | undefined {
  const m = /^\((\d+)\/(\d+)\)/.exec(line);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

export function progressBar(done: number, total: number, width: number): string {
  const frac = total > 0 ? Math.min(1, done / total) : 0;
  const full = Math.round(frac * width);
  return `[${'#'.repeat(full)}${'.'.repeat(width - full)}] ${Math.round(frac * 100)}%`;
}

/** The live table: one row per case, one column per peer, medians so far. Pure. */
export function liveTable(samples: readonly SampleEvent[], maxRows: number): string[] {
  const cases: string[] = [];
  const peers: string[] = [];
  const values = new Map<string, number[]>();
  for (const s of samples) {
    if (!cases.includes(s.case)) cases.push(s.case);
    if (!peers.includes(s.peer)) peers.push(s.peer);
    const k = `${s.case}\u0000${s.peer}`;
    values.set(k, [...(values.get(k) ?? []), s.value]);
  }
  if (cases.length === 0) return [];
  const unitOf = (c: string) => {
    const metric = samples.find((s) => s.case === c)?.metric;
    return metric ? METRICS[metric].unit : '';
  };
  const rows = cases.slice(-maxRows).map((c) => [
    `${c} (${unitOf(c)})`,
    ...peers.map((p) => {
      const v = values.get(`${c}\u0000${p}`);
      return v ? formatNumber(median(v)) : '';
    }),
  ]);
  const head = ['case', ...peers];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: readonly string[]) =>
    r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [fmt(head), ...rows.map(fmt)];
}

export class LiveDisplay {
  private readonly out: LiveOutput;
  private readonly samples: SampleEvent[] = [];
  private scenario = '';
  private line = '';
  private drawn = 0;

  constructor(out: LiveOutput) {
    this.out = out;
  }

  startScenario(name: string): void {
    this.scenario = name;
    this.samples.length = 0;
    this.line = '';
    if (!this.out.isTTY) this.out.write(`== ${name}\n`);
  }

  progress(line: string): void {
    this.line = line;
    if (this.out.isTTY) this.redraw();
    else this.out.write(`${this.scenario}: ${line}\n`);
  }

  sample(e: SampleEvent): void {
    this.samples.push(e);
    if (this.out.isTTY) this.redraw();
    else this.out.write(`${this.scenario}: ${e.peer} ${e.case}: ${formatNumber(e.value)} ${METRICS[e.metric].unit}\n`);
  }

  /** Leaves the final table on screen and moves below it. */
  finishScenario(summary: string): void {
    if (this.out.isTTY) this.redraw(true);
    this.drawn = 0;
    this.out.write(`${summary}\n`);
  }

  private redraw(final = false): void {
    const width = Math.max(40, this.out.columns);
    const step = stepOf(this.line);
    const bar = step ? `${progressBar(step[0], step[1], 30)} ` : '';
    const lines = [
      `${this.scenario} ${final ? 'done' : `${bar}${this.line}`}`.slice(0, width - 1),
      ...liveTable(this.samples, 20).map((l) => l.slice(0, width - 1)),
    ];
    // Move up over what was drawn last time and clear to the end of the screen.
    const up = this.drawn > 0 ? `\x1b[${this.drawn}A\r\x1b[J` : '';
    this.out.write(`${up}${lines.join('\n')}\n`);
    this.drawn = lines.length;
  }
}
