// `estuary bench coordinator`: every scenario in bench/coordinator/scenarios/ under every policy
// the coordinator's config accepts (LSF-RC threshold, COBalD Linear and RelativeSupply,
// GlideinWMS, and estuary's own once `controller.type: estuary` exists), each policy with its
// documented defaults and nothing tuned per scenario, in one run, on the simulator
// (coordinator/sim/). Reports per scenario and policy the makespan, waits, idle core-hours,
// dollars, WAN bytes and drones; checks estuary's figures against its placement targets (relative
// to the best baseline of each scenario); draws jobs by state and dollars over time.

import { readdirSync } from 'node:fs';
import { onDemandOnly, policies, sellsSpot, type SimResult, simulate } from '../../coordinator/sim/run.ts';
import { loadScenario, type Scenario } from '../../coordinator/sim/scenario.ts';
import type { Measurement, PeerStatus, Scenario as BenchScenario, ScenarioResult } from '../scenario.ts';
import { type Series, thin } from '../report/lines.ts';
import { marketsOf, marketText, pricesText } from './markets.ts';
import { targetNotes } from './targets.ts';

const DIR = new URL('./scenarios/', import.meta.url);

export function scenarioFiles(): string[] {
  return readdirSync(DIR)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => new URL(f, DIR).pathname);
}

/** --quick: every tenth job, same sites: the shape of each scenario in a tenth of the time. */
export function reduce(s: Scenario): Scenario {
  return { ...s, trace: { ...s.trace, jobs: s.trace.jobs.filter((_, i) => i % 10 === 0) } };
}

function measurements(r: SimResult): Measurement[] {
  const m = (c: string, metric: Measurement['metric'], value: number): Measurement => ({ case: `${r.scenario}: ${c}`, peer: r.policy, metric, samples: [value] });
  return [
    m('makespan', 'hours', r.makespanS / 3600),
    m('mean wait', 'minutes', r.meanWaitS / 60),
    m('p95 wait', 'minutes', r.p95WaitS / 60),
    m('idle core-hours', 'idleCoreHours', r.idleCoreHours),
    m('compute cost', 'dollars', r.computeDollars),
    m('egress cost', 'dollars', r.egressDollars),
    m('total cost', 'dollars', r.computeDollars + r.egressDollars),
    m('WAN', 'wanGB', r.wanBytes / 1e9),
    m('drones started', 'drones', r.dronesStarted),
  ];
}

function charts(scenario: string, runs: readonly SimResult[]): Series[] {
  const out: Series[] = [];
  for (const r of runs) {
    const pts = thin(r.timeline);
    const x = pts.map((p) => p.t / 3600);
    out.push({
      id: `coordinator-${scenario}-${r.policy}-jobs`,
      title: `${scenario}, ${r.policy}: jobs by state`,
      xLabel: 'hours since the first submission',
      yLabel: 'jobs',
      x,
      lines: [
        { name: 'pending', y: pts.map((p) => p.pending) },
        { name: 'running at home', y: pts.map((p) => p.home) },
        { name: 'running in clouds', y: pts.map((p) => p.cloud) },
      ],
    });
  }
  const longest = runs.reduce((a, b) => (b.timeline.length > a.timeline.length ? b : a), runs[0]!);
  const grid = thin(longest.timeline).map((p) => p.t);
  out.push({
    id: `coordinator-${scenario}-cost`,
    title: `${scenario}: dollars spent (compute + egress)`,
    xLabel: 'hours since the first submission',
    yLabel: 'dollars',
    x: grid.map((t) => t / 3600),
    lines: runs.map((r) => ({
      name: r.policy,
      y: grid.map((t) => {
        // The last sample at or before t; a run that ended keeps its final total.
        let lo = 0;
        let hi = r.timeline.length - 1;
        while (lo < hi) {
          const mid = (lo + hi + 1) >> 1;
          if (r.timeline[mid]!.t <= t) lo = mid;
          else hi = mid - 1;
        }
        const p = r.timeline[lo];
        return p ? p.compute + p.egress : 0;
      }),
    })),
  });
  return out;
}

export const coordinatorScenario: BenchScenario = async (ctx): Promise<ScenarioResult> => {
  const files = Array.isArray(ctx.settings.scenarioFiles) ? (ctx.settings.scenarioFiles as string[]) : scenarioFiles();
  // estuary places work at submission: the site's job_submit plugin holds new jobs for it (hold).
  const pols = policies().map((p) => (p.controller.type === 'estuary' ? { ...p, controller: { ...p.controller, hold: true } } : p));
  const results: SimResult[] = [];
  const series: Series[] = [];
  const notes: string[] = [];
  const runAll = async (s: Scenario, onDemand: boolean): Promise<SimResult[]> => {
    const runs: SimResult[] = [];
    for (const p of pols) {
      if (ctx.signal.aborted) break;
      ctx.progress(`coordinator: ${s.name} under ${p.name}`);
      const r = await simulate(s, p.controller, { spot: !onDemand && marketsOf(p.name).spot });
      ctx.log.info({ scenario: s.name, policy: p.name, wallS: Math.round(r.wallMs) / 1000, ticks: r.ticks, events: r.events }, 'simulated');
      if (r.finished < r.jobs) notes.push(`${s.name}, ${p.name}: ${r.jobs - r.finished} of ${r.jobs} jobs never ran (the policy started no drone they fit)`);
      runs.push(r);
    }
    return runs;
  };
  for (const file of files) {
    const full = loadScenario(file);
    const s = ctx.quick ? reduce(full) : full;
    notes.push(`${s.name}: prices ${pricesText(s)}; markets given: ${pols.map((p) => `${p.name} ${marketText(p.name, s)}`).join('; ')}`);
    const runs = await runAll(s, false);
    results.push(...runs);
    series.push(...charts(s.name, runs));
    notes.push(...targetNotes(s.name, runs));
    if (sellsSpot(s)) {
      // The same scenario with every policy held to on demand: the second table.
      const od = onDemandOnly(s);
      notes.push(`${od.name}: ${s.name} with no spot market; every policy on demand`);
      results.push(...(await runAll(od, true)));
    }
  }
  const peers: PeerStatus[] = pols.map((p) => ({ peer: p.name, status: 'ok' }));
  if (!pols.some((p) => p.name === 'estuary'))
    peers.push({ peer: 'estuary', status: 'skipped', reason: 'controller.type estuary is not in this tree yet' });
  const wall = results.reduce((s, r) => s + r.wallMs, 0) / 1000;
  return {
    scenario: 'coordinator',
    settings: {
      scenarios: files.map((f) => f.replace(/^.*\//, '')),
      policies: pols.map((p) => ({ name: p.name, controller: p.controller, spot: marketsOf(p.name).spot, markets: marketsOf(p.name).how })),
      quick: ctx.quick,
      simulatedRuns: results.map((r) => ({ scenario: r.scenario, policy: r.policy, jobs: r.jobs, finished: r.finished, ticks: r.ticks, events: r.events, wallSeconds: Math.round(r.wallMs) / 1000, spotReclaims: r.spotReclaims, starts: r.starts, steeredStarts: r.steeredStarts, apiErrors: r.apiErrors, paidCoreHours: r.paidCoreHours, wanGBByLink: Object.fromEntries(Object.entries(r.wanByLink).map(([k, v]) => [k, Math.round(v / 1e8) / 10])) })),
    },
    peers,
    measurements: results.flatMap(measurements),
    baseline: 'lsf-rc',
    method: [
      'Simulated: the real coordinator (control loop, policy, drone states, registry in memory) on a virtual clock against simulated sites and a simulated Slurm (coordinator/sim/).',
      'Deterministic: one run per scenario and policy, seeded; a rerun gives the same figures.',
      'Every policy runs with its documented defaults; nothing is tuned per scenario. estuary runs with `hold: true` in every scenario: new jobs arrive held by the feature estuary_hold (a job_submit plugin) until the coordinator places them.',
      'Markets: each baseline buys on every market its tool supports (bench/coordinator/markets.ts); the notes state per scenario the prices and which policy was given spot. A scenario with a spot price runs a second time with every policy on demand (`<scenario>-on-demand`).',
      `Idle core-hours count cloud cores paid for (deploy to stop) that ran no job; home slots are free and not counted. ${Math.round(wall)} s of wall time for all runs.`,
    ],
    notes,
    series,
  };
};
