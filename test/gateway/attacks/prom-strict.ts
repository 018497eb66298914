// A strict reader of the Prometheus text exposition format (version 0.0.4), as a scraper reads
// it: every line is a comment (# HELP / # TYPE), blank, or `name{labels} value [timestamp]`;
// names and label names match the format's grammar; label values use only the \\ \" \n escapes;
// values are Go floats (incl. NaN, +Inf, -Inf); a TYPE comes before its samples, at most once per
// family, and one family's samples are not split by another's.

export interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function parseValue(v: string, line: string): number {
  if (v === 'NaN') return Number.NaN;
  if (v === '+Inf' || v === 'Inf') return Infinity;
  if (v === '-Inf') return -Infinity;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(v)) throw new Error(`bad value in: ${line}`);
  return Number(v);
}

function familyOf(name: string, types: Map<string, string>): string {
  for (const suffix of ['_bucket', '_sum', '_count', '_total', '']) {
    if (suffix && !name.endsWith(suffix)) continue;
    const base = suffix ? name.slice(0, -suffix.length) : name;
    if (types.has(base)) return base;
  }
  return name;
}

export function parseStrict(text: string): Sample[] {
  if (text.length > 0 && !text.endsWith('\n')) throw new Error('exposition does not end with a newline');
  const out: Sample[] = [];
  const types = new Map<string, string>();
  const closed = new Set<string>();
  let current: string | undefined;
  const seen = new Set<string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
      if (!m) continue; // other comments are allowed
      if (!NAME.test(m[2]!)) throw new Error(`bad metric name in: ${line}`);
      if (m[1] === 'TYPE') {
        if (types.has(m[2]!)) throw new Error(`second TYPE for ${m[2]}`);
        if (!TYPES.has(m[3] ?? '')) throw new Error(`bad type in: ${line}`);
        types.set(m[2]!, m[3]!);
      }
      continue;
    }
    const m = /^([^\s{]+)(\{(.*)\})?[ \t]+(\S+)(?:[ \t]+(-?\d+))?$/.exec(line);
    if (!m) throw new Error(`unparsable line: ${line}`);
    const name = m[1]!;
    if (!NAME.test(name)) throw new Error(`bad metric name: ${line}`);
    const labels: Record<string, string> = {};
    let rest = m[3] ?? '';
    while (rest.length > 0) {
      const lm = /^([^=\s]+)="((?:[^"\\\n]|\\[\\"n])*)"(,?)/.exec(rest);
      if (!lm) throw new Error(`bad labels in: ${line}`);
      if (!LABEL.test(lm[1]!)) throw new Error(`bad label name in: ${line}`);
      if (lm[1]! in labels) throw new Error(`repeated label in: ${line}`);
      labels[lm[1]!] = lm[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
      rest = rest.slice(lm[0].length);
      if (rest.length > 0 && lm[3] !== ',') throw new Error(`bad labels in: ${line}`);
    }
    const fam = familyOf(name, types);
    if (fam !== current) {
      if (closed.has(fam)) throw new Error(`samples of ${fam} are split by another family`);
      if (current) closed.add(current);
      current = fam;
    }
    const id = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(id)) throw new Error(`duplicate sample: ${line}`);
    seen.add(id);
    out.push({ name, labels, value: parseValue(m[4]!, line) });
  }
  return out;
}

export function sum(samples: readonly Sample[], name: string, where: Record<string, string> = {}): number {
  let t = 0;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (Object.entries(where).every(([k, v]) => s.labels[k] === v)) t += s.value;
  }
  return t;
}
