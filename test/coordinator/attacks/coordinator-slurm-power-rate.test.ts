// The slurm-power controller's `resume-rate`: "at most `resume-rate` nodes a minute" (Slurm's
// ResumeRate, docs/COORDINATOR.md, "slurm-power"). ResumeRate is one number for the whole
// slurmctld: nodes resumed per minute across every partition and node set, not per set. Run on
// the simulator, which builds the coordinator exactly as `estuary coordinator` does.

import { expect, test } from 'vitest';
import { controllerSchema } from '../../../coordinator/config.ts';
import { simulate } from '../../../coordinator/sim/run.ts';
import { parseScenario } from '../../../coordinator/sim/scenario.ts';

const jobs = JSON.stringify(Array.from({ length: 100 }, () => ({ submit: 0, runtime: 3600 })));

function scenario(sites: string[], interval: string) {
  const text = `name: t
trace: jobs.json
home: { nodes: 0, cores: 1 }
interval: ${interval}
max-time: 59s
machine-types:
  one: { cores: 1, memory: 4GiB }
sites:
${sites.map((s) => `  ${s}: { quota: 100, machine-types: [one], cost-per-core-hour: 0.04, sim: { boot: 5m } }`).join('\n')}
`;
  return parseScenario(text, '/virtual/s.yaml', () => jobs);
}

const power = controllerSchema.parse({ type: 'slurm-power', resumeRate: 1 });

test('resume-rate 1 resumes at most one node in a minute at the default 10 s interval', async () => {
  // Today each interval resumes max(1, floor(rate × interval / 60 s)) = 1 node: six a minute.
  const r = await simulate(scenario(['aws'], '10s'), power);
  expect(r.dronesStarted, `${r.dronesStarted} nodes resumed in the first minute at ResumeRate=1`).toBeLessThanOrEqual(1);
});

test('resume-rate is the cluster\'s, not each site\'s: two sites at rate 2 resume at most two nodes a minute', async () => {
  // Holds today (first fit sends the demand to one pool); kept as a regression.
  const r = await simulate(scenario(['aws', 'gcp'], '1m'), controllerSchema.parse({ type: 'slurm-power', resumeRate: 2 }));
  expect(r.dronesStarted, `${r.dronesStarted} nodes resumed in the first minute at ResumeRate=2`).toBeLessThanOrEqual(2);
});

test('resume-rate 0 (no limit) resumes every node the pending jobs need at once', async () => {
  const r = await simulate(scenario(['aws'], '10s'), controllerSchema.parse({ type: 'slurm-power' }));
  expect(r.dronesStarted).toBe(100);
});
