// `estuary coordinator simulate FILE`: one scenario under the configured controller, printed as
// a short table an admin can read before trusting a policy with a budget.

import type { ControllerConfig } from '../config.ts';
import { simulate, type SimResult } from './run.ts';
import { loadScenario } from './scenario.ts';

export function summaryTable(r: SimResult): string {
  const rows: [string, string][] = [
    ['scenario', r.scenario],
    ['policy', r.policy],
    ['jobs finished', `${r.finished} of ${r.jobs}`],
    ['makespan', `${(r.makespanS / 3600).toFixed(2)} h`],
    ['wait, mean / p95', `${(r.meanWaitS / 60).toFixed(1)} / ${(r.p95WaitS / 60).toFixed(1)} min`],
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

export async function simulateFile(file: string, controller: ControllerConfig): Promise<string> {
  return summaryTable(await simulate(loadScenario(file), controller));
}
