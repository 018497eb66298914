// The placement targets for estuary's policy, each against the best baseline of its scenario (the
// lowest figure among LSF-RC, COBalD Linear and RelativeSupply, GlideinWMS and Slurm power saving,
// each on the markets its tool supports, bench/coordinator/markets.ts), written as one
// note per target saying met or missed. A baseline that left jobs unfinished is no baseline, and
// neither is one that never burst (COBalD's RelativeSupply scales the supply it has, so from no
// drones it starts none): running everything at home is not a way of bursting, and its zero idle
// hours or WAN bytes would make every target unreachable by definition. Pure.

import type { SimRecord as SimResult } from './child.ts';

interface Target {
  readonly label: string;
  readonly of: (r: SimResult) => number;
  readonly atMost: number;
}

const total = (r: SimResult) => r.computeDollars + r.egressDollars;
const makespan = { label: 'makespan', of: (r: SimResult) => r.makespanS } as const;

export const TARGETS: Readonly<Record<string, readonly Target[]>> = {
  'fermilab-nova': [{ label: 'total cost', of: total, atMost: 0.8 }, { ...makespan, atMost: 1.05 }],
  'data-heavy': [{ label: 'WAN bytes', of: (r) => r.wanBytes, atMost: 0.5 }, { ...makespan, atMost: 1.05 }],
  'kek-figure8': [{ ...makespan, atMost: 1.0 }, { label: 'idle core-hours', of: (r) => r.idleCoreHours, atMost: 0.8 }],
};

const fmt = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toPrecision(3));

export function targetNotes(scenario: string, runs: readonly SimResult[]): string[] {
  const targets = TARGETS[scenario];
  const ours = runs.find((r) => r.policy === 'estuary');
  const baselines = runs.filter((r) => r.policy !== 'estuary' && r.finished === r.jobs && r.dronesStarted > 0);
  if (!targets) return [];
  if (!ours) return [`${scenario}: targets not checked: estuary's policy is not in this run`];
  if (baselines.length === 0) return [`${scenario}: targets not checked: no baseline burst and finished every job`];
  return targets.map((t) => {
    const best = baselines.reduce((a, b) => (t.of(b) < t.of(a) ? b : a));
    const ratio = t.of(best) > 0 ? t.of(ours) / t.of(best) : t.of(ours) === 0 ? 1 : Infinity;
    const ok = ours.finished === ours.jobs && ratio <= t.atMost;
    return `${scenario}: ${t.label} ${fmt(ratio)}× the best baseline (${best.policy}: ${fmt(t.of(best))} vs estuary ${fmt(t.of(ours))}); target ≤ ${t.atMost}×: ${ok ? 'met' : 'MISSED'}`;
  });
}
