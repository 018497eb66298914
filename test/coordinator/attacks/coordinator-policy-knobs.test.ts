// estuary's policy parameters at their edges (docs/COORDINATOR.md, "`estuary` — data- and
// cost-aware placement", "Reading a decision"). A value the config accepts must give a decision
// whose sentence and numbers mean something; one that cannot is refused with one line naming the
// key (the coordinator's own --interval refuses 0: "expected a duration from 100ms to 1h").

import { pino } from 'pino';
import { expect, test } from 'vitest';
import { MemoryBatch } from '../../../coordinator/batch/memory.ts';
import { VirtualClock } from '../../../coordinator/clock.ts';
import { controllerSchema, machineTypesSchema, storagesSchema } from '../../../coordinator/config.ts';
import { Coordinator } from '../../../coordinator/coordinator.ts';
import { DroneRegistry } from '../../../coordinator/registry.ts';
import { policyFor, storageLocations } from '../../../coordinator/service.ts';
import { simulate } from '../../../coordinator/sim/run.ts';
import { parseScenario } from '../../../coordinator/sim/scenario.ts';
import { MemorySite } from '../../../coordinator/sites/memory.ts';
import type { Logger } from '../../../lib/log.ts';

/** One interval of estuary's policy over two sites (aws $0.04, gcp $0.05 a core-hour) and one 5 GB input. */
async function decide(controller: Record<string, unknown>) {
  const clock = new VirtualClock();
  const aws = new MemorySite('aws', clock);
  const gcp = new MemorySite('gcp', clock);
  const batch = new MemoryBatch([aws, gcp]);
  batch.home = ['home'];
  const registry = DroneRegistry.inMemory();
  const site = (name: string, price: number) => ({ name, quota: 4, min: 0, machineTypes: ['m'], costPerCoreHour: price, idleTime: 600_000, bootTimeout: 600_000, minLifetime: 0 });
  const co = new Coordinator({
    registry,
    batch,
    sites: new Map([['aws', aws], ['gcp', gcp]]),
    siteSettings: [site('aws', 0.04), site('gcp', 0.05)],
    machineTypes: machineTypesSchema.parse({ m: { cores: 4, memory: '8GiB' } }),
    ...policyFor(controllerSchema.parse(controller)),
    storage: storageLocations(storagesSchema.parse({ bucket: { urls: ['s3://data/'] } })),
    intervalMs: 10_000,
    clock,
    log: pino({ level: 'silent' }) as unknown as Logger,
    prefix: 'atk-',
  });
  batch.pending = [{ id: '1', partition: 'hybrid', cpus: 1, memoryMb: 1000, constraints: [], inputs: [{ url: 's3://data/f', bytes: 5e9 }], submittedAt: clock.now(), reason: 'Resources' }];
  const r = await co.tick();
  registry.close();
  return r.pools.map((p) => p.reason as Record<string, unknown>);
}

test('the largest wan-per-gb the config accepts still gives a decision sentence with numbers', async () => {
  // wan-per-gb: 1e308 is accepted; 5 GB × 1e308 is Infinity, so the sentence reads
  // "gcp +$NaN a job" and /api/v1/status carries "wanCost": null. (At 1e300 the $0.01 price
  // difference vanishes in the rounding and the sentence says "gcp +$0.00 a job".)
  const parsed = controllerSchema.safeParse({ type: 'estuary', wanPerGb: 1e308 });
  if (!parsed.success) {
    expect(parsed.error.issues[0]!.path.join('.')).toMatch(/wanPerGb|wan-per-gb/);
    return;
  }
  const reasons = await decide({ type: 'estuary', wanPerGb: 1e308 });
  const placed = reasons.find((r) => r.pendingJobs === 1)!;
  expect(placed.why).not.toMatch(/NaN|Infinity/);
  for (const [k, v] of Object.entries(placed)) if (typeof v === 'number' || v === null) expect(Number.isFinite(v), `${k} = ${v}`).toBe(true);
});

test('regression: at the default wan-per-gb the sentence names the dearer site and its price difference', async () => {
  const reasons = await decide({ type: 'estuary' });
  const placed = reasons.find((r) => r.pendingJobs === 1)!;
  expect(placed.why).toMatch(/^1 pending job needs s3:\/\/data\/f \(5 GB, 0 B cached at aws\): aws on-demand \$0\.16\/h, 1 new drone; gcp \+\$0\.01 a job(; it runs .*)?$/);
  expect(placed.wanCost).toBe(0.1);
});

test('runtime: 0 is refused: work of unknown length is not free of time', async () => {
  // Accepted today, and a job with no --time is then expected to take no time: the policy packs
  // 100 hour-long jobs on one drone (makespan 100 h instead of 1.1 h with runtime 1h).
  const parsed = controllerSchema.safeParse({ type: 'estuary', runtime: 0 });
  if (!parsed.success) return;
  const jobs = JSON.stringify(Array.from({ length: 100 }, () => ({ submit: 0, runtime: 3600 })));
  const s = parseScenario(`name: t
trace: jobs.json
home: { nodes: 0, cores: 1 }
machine-types:
  one: { cores: 1, memory: 4GiB }
sites:
  aws: { quota: 100, machine-types: [one], cost-per-core-hour: 0.04, sim: { boot: 5m } }
`, '/virtual/s.yaml', () => jobs);
  const r = await simulate(s, parsed.data);
  expect(r.dronesStarted, `runtime 0 accepted; ${r.dronesStarted} drone(s) for 100 hour-long jobs, makespan ${(r.makespanS / 3600).toFixed(1)} h`).toBeGreaterThan(50);
});
