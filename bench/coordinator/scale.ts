// The simulator's scale check: N single-core jobs at once (100,000 by default) for one cloud site
// with a quota of 5,000 four-core drones, under the LSF-RC policy, timed on the wall clock:
//   npx node bench/coordinator/scale.ts [JOBS] [DRONES]
// docs/BENCHMARKING.md, "Coordinator", gives the figures and how they grow with jobs and drones.

import { controllerSchema } from '../../coordinator/config.ts';
import { simulate } from '../../coordinator/sim/run.ts';
import { parseScenario } from '../../coordinator/sim/scenario.ts';
import { scale } from './generate.ts';

export function scaleScenario(jobs: number, drones: number) {
  const text = `name: scale
trace: scale.json
home: { nodes: 0, cores: 1 }
interval: 30s
idle-time: 10m
machine-types: { c4: { cores: 4, memory: 16GiB } }
sites:
  cloud:
    quota: ${drones}
    machine-types: [c4]
    cost-per-core-hour: 0.04
    sim: { boot: 2m, boot-jitter: 1m, api-error-rate: 0.001 }
`;
  return parseScenario(text, '/scale/scale.yaml', () => JSON.stringify(scale(jobs)));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const jobs = Number(process.argv[2] ?? 100_000);
  const drones = Number(process.argv[3] ?? 5000);
  const s = scaleScenario(jobs, drones);
  const cpu0 = process.cpuUsage();
  const r = await simulate(s, controllerSchema.parse({ type: 'threshold' }));
  const cpu = process.cpuUsage(cpu0);
  const mem = Math.round(process.memoryUsage().rss / 1e6);
  process.stdout.write(`${JSON.stringify({ jobs, drones, finished: r.finished, dronesStarted: r.dronesStarted, makespanH: +(r.makespanS / 3600).toFixed(2), ticks: r.ticks, events: r.events, wallS: +(r.wallMs / 1000).toFixed(1), cpuS: +((cpu.user + cpu.system) / 1e6).toFixed(1), rssMB: mem })}\n`);
}
