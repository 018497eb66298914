// `estuary bench coordinator`: every scenario in bench/coordinator/scenarios/ under every policy
// the coordinator's config accepts (LSF-RC threshold, COBalD Linear and RelativeSupply,
// GlideinWMS, Slurm power saving and estuary's own), each with its documented defaults, on the
// markets its tool supports (markets.ts), nothing tuned per scenario, in one run, on the
// simulator, each run a child `estuary coordinator simulate --json` (child.ts). Reports per scenario and policy the makespan, waits, idle core-hours,
// dollars, WAN bytes and drones; checks estuary's figures against its placement targets (relative
// to the best baseline of each scenario); draws jobs by state and dollars over time.

import { readdirSync } from 'node:fs';
import type { Measurement, PeerStatus, Scenario as BenchScenario, ScenarioResult } from '../scenario.ts';
import { type Series, thin } from '../report/lines.ts';
import { type ChildRun, pool, type SimRecord as SimResult, simulateChild } from './child.ts';
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
const QUICK_EVERY = 10;

/**
 * Every controller type the coordinator's config accepts, by the name the report uses; each runs
 * with its documented defaults (the child fills them in), estuary with the site holding new jobs.
 */
export const POLICIES: readonly { readonly name: string; readonly controller: Readonly<Record<string, unknown>> }[] = [
  { name: 'lsf-rc', controller: { type: 'threshold' } },
  { name: 'cobald-linear', controller: { type: 'linear' } },
  { name: 'cobald-relative', controller: { type: 'relative' } },
  { name: 'glideinwms', controller: { type: 'glideinwms' } },
  { name: 'slurm-power', controller: { type: 'slurm-power' } },
  { name: 'estuary', controller: { type: 'estuary', hold: true } },
];

/** Two children at a time: the machine's two cores, and room for the bench's own reading. */
const WIDTH = 2;

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
  const pols = POLICIES;
  const results: SimResult[] = [];
  const series: Series[] = [];
  const notes: string[] = [];
  const every = ctx.quick ? QUICK_EVERY : 1;
  const runAll = (file: string, onDemand: boolean): Promise<SimResult[]> =>
    pool(
      pols.map((p) => async () => {
        const run: ChildRun = { file, controller: p.controller, market: onDemand ? 'on-demand' : marketsOf(p.name).spot ? 'spot' : 'as-configured', every };
        ctx.progress(`coordinator: ${file.replace(/^.*\//, '')}${onDemand ? ' (on demand only)' : ''} under ${p.name}`);
        const r = await simulateChild(run, ctx.signal);
        ctx.log.info({ scenario: r.scenario, policy: p.name, wallS: Math.round(r.wallMs) / 1000, cpuS: r.cpuMs / 1000, ticks: r.ticks, events: r.events }, 'simulated');
        if (r.finished < r.jobs) notes.push(`${r.scenario}, ${p.name}: ${r.jobs - r.finished} of ${r.jobs} jobs never ran (the policy started no drone they fit)`);
        return r;
      }),
      WIDTH,
    );
  for (const file of files) {
    if (ctx.signal.aborted) break;
    const runs = await runAll(file, false);
    const name = runs[0]!.scenario;
    notes.push(`${name}: prices ${pricesText(runs[0]!)}; markets given: ${pols.map((p) => `${p.name} ${marketText(p.name, runs[0]!)}`).join('; ')}`);
    results.push(...runs);
    series.push(...charts(name, runs));
    notes.push(...targetNotes(name, runs));
    if (runs[0]!.sellsSpot) {
      // The same scenario with every policy held to on demand: the second table.
      const od = await runAll(file, true);
      notes.push(`${od[0]!.scenario}: ${name} with no spot market; every policy on demand`);
      results.push(...od);
    }
  }
  const peers: PeerStatus[] = pols.map((p) => ({ peer: p.name, status: 'ok' }));
  const wall = results.reduce((s, r) => s + r.cpuMs, 0) / 1000;
  return {
    scenario: 'coordinator',
    settings: {
      scenarios: files.map((f) => f.replace(/^.*\//, '')),
      policies: pols.map((p) => ({ name: p.name, controller: p.controller, spot: marketsOf(p.name).spot, markets: marketsOf(p.name).how })),
      quick: ctx.quick,
      simulatedRuns: results.map((r) => ({ scenario: r.scenario, policy: r.policy, jobs: r.jobs, finished: r.finished, ticks: r.ticks, events: r.events, wallSeconds: Math.round(r.wallMs) / 1000, cpuSeconds: r.cpuMs / 1000, spotReclaims: r.spotReclaims, starts: r.starts, steeredStarts: r.steeredStarts, apiErrors: r.apiErrors, paidCoreHours: r.paidCoreHours, wanGBByLink: Object.fromEntries(Object.entries(r.wanByLink).map(([k, v]) => [k, Math.round(v / 1e8) / 10])) })),
    },
    peers,
    measurements: results.flatMap(measurements),
    baseline: 'lsf-rc',
    method: [
      'Simulated: the real coordinator (control loop, policy, drone states, registry in memory) on a virtual clock against simulated sites and a simulated Slurm, each run a child process `estuary coordinator simulate FILE --json` (two at a time).',
      'Deterministic: one run per scenario and policy, seeded; a rerun gives the same figures.',
      'Every policy runs with its documented defaults; nothing is tuned per scenario. estuary runs with `hold: true` in every scenario: new jobs arrive held by the feature estuary_hold (a job_submit plugin) until the coordinator places them.',
      'Markets: each baseline buys on every market its tool supports (bench/coordinator/markets.ts); the notes state per scenario the prices and which policy was given spot. A scenario with a spot price runs a second time with every policy on demand (`<scenario>-on-demand`).',
      `Idle core-hours count cloud cores paid for (deploy to stop) that ran no job; home slots are free and not counted. ${Math.round(wall)} s of simulator CPU time for all runs.`,
    ],
    notes,
    series,
  };
};
