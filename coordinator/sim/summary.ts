// `estuary coordinator simulate FILE`: one scenario under the configured controller, printed as
// a short table an admin can read before trusting a policy with a budget.

import type { ControllerConfig } from '../config.ts';
import { onDemandOnly, simulate, type SimResult } from './run.ts';
import { loadScenario, type Scenario } from './scenario.ts';

/** Makespan and waits are undefined when no job finished or started (null in --json). */
const NONE_FINISHED = 'none finished';

export function summaryTable(r: SimResult): string {
  const rows: [string, string][] = [
    ['scenario', r.scenario],
    ['policy', r.policy],
    ['jobs finished', `${r.finished} of ${r.jobs}`],
    ['makespan', r.finished ? `${(r.makespanS / 3600).toFixed(2)} h` : NONE_FINISHED],
    ['wait, mean / p95', Number.isFinite(r.meanWaitS) ? `${(r.meanWaitS / 60).toFixed(1)} / ${(r.p95WaitS / 60).toFixed(1)} min` : 'none started'],
    ['cloud core-hours paid / idle', `${r.paidCoreHours.toFixed(1)} / ${r.idleCoreHours.toFixed(1)}`],
    ['compute / egress', `$${r.computeDollars.toFixed(2)} / $${r.egressDollars.toFixed(2)}`],
    ['over the WAN', `${(r.wanBytes / 1e9).toFixed(1)} GB`],
    ['drones started', String(r.dronesStarted)],
    ['spot reclaims / API errors', `${r.spotReclaims} / ${r.apiErrors}`],
    ['simulated in', `${(r.wallMs / 1000).toFixed(1)} s (${r.ticks} intervals, ${r.events} events)`],
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  return `${rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n')}\n`;
}

export interface SimulateOptions {
  /** One JSON object (`--json`) instead of the table. */
  readonly json?: boolean;
  readonly market?: 'as-configured' | 'spot' | 'on-demand';
  /** Keep every n-th job of the trace. */
  readonly every?: number;
  /** `controller` is only the default: a controller the scenario names is simulated instead. */
  readonly scenarioController?: boolean;
}

/** What each site sells, for a reader of the JSON that has no scenario parser. */
const prices = (s: Scenario) =>
  s.sites.map((site) => ({ name: site.name, costPerCoreHour: site.config.costPerCoreHour, ...(site.config.spotPerCoreHour !== undefined ? { spotPerCoreHour: site.config.spotPerCoreHour } : {}) }));

export async function simulateFile(file: string, controller: ControllerConfig, o: SimulateOptions = {}): Promise<string> {
  let s = loadScenario(file);
  const sellsSpot = s.sites.some((site) => site.config.spotPerCoreHour !== undefined);
  if ((o.every ?? 1) > 1) s = { ...s, trace: { ...s.trace, jobs: s.trace.jobs.filter((_, i) => i % o.every! === 0) } };
  if (o.market === 'on-demand') s = onDemandOnly(s);
  const cpu = process.cpuUsage();
  const r = await simulate(s, (o.scenarioController && s.controller) || controller, { spot: o.market === 'spot' });
  const used = process.cpuUsage(cpu);
  if (!o.json) return summaryTable(r);
  return `${JSON.stringify({ ...r, cpuMs: Math.round((used.user + used.system) / 1000), peakRssMb: Math.round(process.resourceUsage().maxRSS / 1000), sellsSpot, sites: prices(s) })}\n`;
}
