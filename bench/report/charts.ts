// Which charts a scenario's results make. Cases named "<family> <files>×<size>MB" (the fuse
// copies) become one chart per family with the datasets along the x axis — the layout of the KEK
// paper's Figures 3 and 4; every other case is grouped by unit, one bar group per case. The
// scenario's reference peer is not a bar among the competitors but a line across each group, and
// a chart from a --quick or single run says so on its face. Pure.

import type { ScenarioRecord } from '../results.ts';

export { type ChartSpec, referenceLabel, type Series } from './chart-spec.ts';
import type { ChartSpec, Series } from './chart-spec.ts';

/** What a chart from this kind of run must say on its face, if anything. */
export function caveatFor(quick: boolean, runs: number): string | undefined {
  if (quick) return '--quick run: reduced sizes, a smoke test, not a measurement';
  if (runs <= 1) return 'single run: one sample per bar, no spread';
  return undefined;
}

const DATASET_CASE = /^(.*) (\d+×[\d.]+MB)$/;

export function splitCase(c: string, unit: string): { family: string; category: string } {
  const m = DATASET_CASE.exec(c);
  return m ? { family: m[1]!, category: m[2]! } : { family: unit, category: c };
}

export function chartId(scenario: string, family: string): string {
  // µs would otherwise lose its µ and read as seconds in the file name.
  return `${scenario}-${family}`
    .replace(/µ/g, 'u')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

const FAMILY_TITLES: Record<string, string> = {
  'fuse/cp up': 'Upload speed (cp local → mount)',
  'fuse/cp down': 'Download speed (cp mount → local)',
  'fuse/seconds': 'Metadata operations (goofys suite)',
  'fuse/cpu up': 'Mount CPU per GB uploaded (user + system, the mount process)',
  'fuse/cpu down': 'Mount CPU per GB downloaded (user + system, the mount process)',
  'fuse/rss up': 'Mount peak memory while uploading (resident set)',
  'fuse/rss down': 'Mount peak memory while downloading (resident set)',
};

export function chartsFor(s: ScenarioRecord, run: { readonly quick: boolean }): ChartSpec[] {
  const families = new Map<
    string,
    { unit: string; higherIsBetter: boolean; categories: string[]; peers: string[] }
  >();
  for (const m of s.measurements) {
    const { family, category } = splitCase(m.case, m.unit);
    let f = families.get(family);
    if (!f) {
      f = { unit: m.unit, higherIsBetter: m.higherIsBetter, categories: [], peers: [] };
      families.set(family, f);
    }
    if (!f.categories.includes(category)) f.categories.push(category);
    if (!f.peers.includes(m.peer)) f.peers.push(m.peer);
  }
  const order = s.peers.map((p) => p.peer);
  return [...families.entries()].map(([family, f]) => {
    const peers = [...f.peers].sort((a, b) => rank(order, a) - rank(order, b));
    const all = peers.map((peer): Series => {
      const cells = f.categories.map((category) =>
        s.measurements.find(
          (m) =>
            m.peer === peer &&
            splitCase(m.case, m.unit).family === family &&
            splitCase(m.case, m.unit).category === category,
        ),
      );
      return {
        peer,
        medians: cells.map((c) => c?.summary.median ?? null),
        mins: cells.map((c) => c?.summary.min ?? null),
        maxs: cells.map((c) => c?.summary.max ?? null),
      };
    });
    const reference = all.find((x) => x.peer === s.reference);
    const runs = Math.max(
      0,
      ...s.measurements.filter((m) => splitCase(m.case, m.unit).family === family).map((m) => m.summary.n),
    );
    const caveat = caveatFor(run.quick, runs);
    return {
      id: chartId(s.scenario, family),
      family,
      title: familyTitle(s.scenario, family, f.unit),
      unit: f.unit,
      higherIsBetter: f.higherIsBetter,
      categories: f.categories,
      series: all.filter((x) => x !== reference),
      ...(reference ? { reference } : {}),
      runs,
      ...(caveat ? { caveat } : {}),
    };
  });
}

export function familyTitle(scenario: string, family: string, unit: string): string {
  return FAMILY_TITLES[`${scenario}/${family}`] ?? (family === unit ? `${scenario}: ${unit}` : family);
}

function rank(order: readonly string[], peer: string): number {
  const i = order.indexOf(peer);
  return i < 0 ? order.length : i;
}
