// Reads numbers back out of Prometheus text: the status page is drawn from the same /metrics text
// the primary aggregates over every worker, so the page and a scrape can never disagree. Pure.

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseProm(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** Sum of every sample of `name` whose labels include `match`. */
export function total(samples: readonly Sample[], name: string, match: Record<string, string> = {}): number {
  let n = 0;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (Object.entries(match).every(([k, v]) => s.labels[k] === v)) n += s.value;
  }
  return n;
}

/** Sums of `name` grouped by the value of one label. */
export function byLabel(samples: readonly Sample[], name: string, label: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const s of samples) {
    if (s.name !== name) continue;
    const k = s.labels[label] ?? '';
    m.set(k, (m.get(k) ?? 0) + s.value);
  }
  return m;
}
