// A coordinator over in-memory site and batch system on a virtual clock: the unit-test world.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { MemoryBatch } from '../../../coordinator/batch/memory.ts';
import { VirtualClock } from '../../../coordinator/clock.ts';
import { controllerSchema } from '../../../coordinator/config.ts';
import { makeController } from '../../../coordinator/controllers.ts';
import { Coordinator } from '../../../coordinator/coordinator.ts';
import { DEFAULT_COST } from '../../../coordinator/cost.ts';
import type { Logger } from '../../../lib/log.ts';
import type { PendingJob } from '../../../coordinator/model.ts';
import { firstFit } from '../../../coordinator/placement.ts';
import { DroneRegistry } from '../../../coordinator/registry.ts';
import { MemorySite } from '../../../coordinator/sites/memory.ts';

export interface World {
  clock: VirtualClock;
  site: MemorySite;
  batch: MemoryBatch;
  stateDir: string;
  coordinator: Coordinator;
  registry: DroneRegistry;
  /** A new coordinator on the same registry file, site and batch system: a restart. */
  restart(): World;
}

export function job(id: string, cpus = 1, at = 0, constraints: string[][] = []): PendingJob {
  return { id, partition: 'hybrid', cpus, memoryMb: 100, constraints, inputs: [], submittedAt: at, reason: 'Resources' };
}

export function makeWorld(
  opts: {
    quota?: number;
    idleTime?: number;
    minLifetime?: number;
    bootTimeout?: number;
    controller?: object;
    stateDir?: string;
    costPerCoreHour?: number;
    budgetPerDay?: number;
    log?: Logger;
  } = {},
  shared?: { clock: VirtualClock; site: MemorySite; batch: MemoryBatch },
): World {
  const clock = shared?.clock ?? new VirtualClock();
  const site = shared?.site ?? new MemorySite('cloud', clock, 5000);
  const batch = shared?.batch ?? new MemoryBatch([site]);
  const stateDir = opts.stateDir ?? mkdtempSync(join(tmpdir(), 'estuary-co-'));
  const registry = DroneRegistry.open(stateDir);
  const controller = makeController(controllerSchema.parse(opts.controller ?? { type: 'threshold' }));
  const coordinator = new Coordinator({
    registry,
    batch,
    sites: new Map([['cloud', site]]),
    siteSettings: [
      {
        name: 'cloud',
        quota: opts.quota ?? 3,
        min: 0,
        idleTime: opts.idleTime ?? 30_000,
        minLifetime: opts.minLifetime ?? 0,
        bootTimeout: opts.bootTimeout ?? 60_000,
        costPerCoreHour: opts.costPerCoreHour ?? 0.05,
        ...(opts.budgetPerDay !== undefined ? { cost: { ...DEFAULT_COST, budgetPerDay: opts.budgetPerDay } } : {}),
        machineTypes: ['small'],
      },
    ],
    machineTypes: { small: { cores: 2, memory: 4 * 1024 ** 3, features: ['cloud'] } },
    policy: { controllerFor: () => controller, placement: firstFit },
    intervalMs: 1000,
    clock,
    log: opts.log ?? pino({ level: 'silent' }),
    prefix: 'es-',
  });
  const world: World = {
    clock,
    site,
    batch,
    stateDir,
    coordinator,
    registry,
    restart() {
      registry.close();
      return makeWorld({ ...opts, stateDir }, { clock, site, batch });
    },
  };
  return world;
}

/** Advances the clock by one interval and runs one tick, n times. */
export async function run(w: World, n: number, each?: () => void): Promise<void> {
  for (let i = 0; i < n; i++) {
    w.clock.advance(1000);
    each?.();
    await w.coordinator.tick();
  }
}

export function states(w: World): Record<string, string> {
  return Object.fromEntries(w.registry.all().map((d) => [d.id, d.state]));
}
