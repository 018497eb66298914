// The simulator's scale check: N single-core jobs at once (100,000 by default) for one cloud site
// with a quota of 5,000 four-core drones, under the LSF-RC policy, run as every bench run is, by
// `estuary coordinator simulate --json` in a child process, which reports its own CPU time:
//   npx node bench/coordinator/scale.ts [JOBS] [DRONES]
// docs/BENCHMARKING.md, "Coordinator", gives the figures and how they grow with jobs and drones.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { simulateChild } from './child.ts';
import { scale } from './generate.ts';

/** The scenario file's text: one site, no home nodes, the trace beside it. */
export function scaleScenario(drones: number): string {
  return `name: scale
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
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const jobs = Number(process.argv[2] ?? 100_000);
  const drones = Number(process.argv[3] ?? 5000);
  const dir = mkdtempSync(join(tmpdir(), 'estuary-scale-'));
  try {
    writeFileSync(join(dir, 'scale.json'), JSON.stringify(scale(jobs)));
    writeFileSync(join(dir, 'scale.yaml'), scaleScenario(drones));
    const load = loadavg()[0]!;
    const wall = performance.now();
    const r = await simulateChild({ file: join(dir, 'scale.yaml'), controller: { type: 'threshold' }, market: 'as-configured', every: 1 }, new AbortController().signal);
    const out = { jobs, drones, finished: r.finished, dronesStarted: r.dronesStarted, makespanH: +(r.makespanS / 3600).toFixed(2), ticks: r.ticks, events: r.events, simWallS: +(r.wallMs / 1000).toFixed(1), childWallS: +((performance.now() - wall) / 1000).toFixed(1), cpuS: +(r.cpuMs / 1000).toFixed(1), peakRssMB: r.peakRssMb, load1: [+load.toFixed(2), +loadavg()[0]!.toFixed(2)] };
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
