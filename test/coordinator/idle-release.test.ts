// The ski-rental release of estuary's policy: an idle drone no placed job uses goes once it has
// been idle as long as a new drone takes to boot, not after the site's (longer) idle time; one a
// placed job uses, one idle for less than a boot, and one younger than its minimum lifetime stay.

import { describe, expect, it } from 'vitest';
import { controllerSchema } from '../../coordinator/config.ts';
import { makeController } from '../../coordinator/controllers.ts';
import { DEFAULT_COST } from '../../coordinator/cost.ts';
import { estuaryPlan } from '../../coordinator/estuary-policy.ts';
import { idleReleasesEarly } from '../../coordinator/idle-release.ts';
import type { PendingJob, PoolView, SiteView, Snapshot } from '../../coordinator/model.ts';
import { firstFit } from '../../coordinator/placement.ts';
import { decide } from '../../coordinator/policy.ts';

const NOW = 1_000 * 86_400_000;
const MIN = 60_000;
const estuary = controllerSchema.parse({ type: 'estuary' }) as Extract<ReturnType<typeof controllerSchema.parse>, { type: 'estuary' }>;
const site = (o: Partial<SiteView> = {}): SiteView => ({
  name: 'a',
  quota: 4,
  min: 0,
  healthy: true,
  idleTime: 10 * MIN,
  minLifetime: 0,
  bootTimeout: 30 * MIN,
  costPerCoreHour: 0.05,
  cost: { ...DEFAULT_COST, bootLatencyMs: 2 * MIN },
  ...o,
});
const drone = (id: string, idleForMs: number, allocCpus = 0) => ({
  drone: { id, site: 'a', machineType: 'small', state: 'available' as const, createdAt: NOW - 60 * MIN, stateSince: NOW - 60 * MIN, lastBusyAt: NOW - idleForMs, instance: {}, reason: { rule: 't' } },
  node: { status: 'available' as const, cpus: 2, allocCpus, memoryMb: 4000, allocMemoryMb: 0 },
});
const pool = (drones: PoolView['drones']): PoolView => ({ key: 'a/small', site: 'a', machineType: 'small', cores: 2, memoryMb: 4000, features: ['site_a'], drones });
const job = (id: string): PendingJob => ({ id, partition: 'hybrid', cpus: 1, memoryMb: 100, constraints: [], inputs: [], submittedAt: NOW - 1000, reason: 'Resources', timeLimitMs: 30 * MIN });
const snap = (s: SiteView, p: PoolView, pending: PendingJob[]): Snapshot => ({ now: NOW, batchHealthy: true, pending, sites: [s], pools: [p] });
const threshold = makeController(controllerSchema.parse({ type: 'threshold' }));
const decideWith = (s: Snapshot) => decide(s, new Map(), { controllerFor: () => threshold, placement: firstFit, intervalMs: 1000, plan: (x) => estuaryPlan(x, estuary) });

describe('idleReleasesEarly', () => {
  const idle = [
    { id: 'long', idx: 0, idleForMs: 3 * MIN, ageMs: 60 * MIN },
    { id: 'short', idx: 1, idleForMs: 1 * MIN, ageMs: 60 * MIN },
    { id: 'used', idx: 2, idleForMs: 5 * MIN, ageMs: 60 * MIN },
    { id: 'young', idx: 3, idleForMs: 3 * MIN, ageMs: 4 * MIN },
  ];
  it('releases only what is idle a boot long, unused by the plan and past its minimum lifetime', () => {
    expect(idleReleasesEarly(idle, new Set([2]), 2 * MIN, 5 * MIN)).toEqual([{ droneId: 'long', idleS: 180, bootS: 120 }]);
  });
  it('at the boot latency exactly, the drone goes (the break-even of ski rental)', () => {
    expect(idleReleasesEarly(idle, new Set(), 3 * MIN, 0).map((r) => r.droneId)).toEqual(['long', 'used', 'young']);
  });
});

describe("estuary's policy and an idle drone", () => {
  it('releases a drone idle for a boot latency with nothing placed on it, long before the idle time, and says why', () => {
    const r = decideWith(snap(site(), pool([drone('a-1', 3 * MIN)]), []));
    expect(r.decisions).toEqual([{ kind: 'release', droneId: 'a-1', reason: expect.objectContaining({ rule: 'idle-boot', idleS: 180, bootS: 120 }) }]);
    expect(r.decisions[0]!.reason.why).toBe('idle 180 s, as long as a new drone takes to boot (120 s), and no pending job is placed on it');
  });

  it('keeps it while it has been idle for less than a boot', () => {
    expect(decideWith(snap(site(), pool([drone('a-1', 1 * MIN)]), [])).decisions).toEqual([]);
  });

  it('keeps the drone a pending job is placed on, and lets the other idle one go', () => {
    const r = decideWith(snap(site(), pool([drone('a-1', 5 * MIN), drone('a-2', 5 * MIN)]), [job('j0'), job('j1')]));
    expect(r.decisions.map((d) => (d.kind === 'release' ? d.droneId : d.kind))).toEqual(['a-2']);
  });

  it('keeps the pool at its minimum, and a drone within its minimum lifetime', () => {
    expect(decideWith(snap(site({ min: 1 }), pool([drone('a-1', 3 * MIN)]), [])).decisions).toEqual([]);
    expect(decideWith(snap(site({ minLifetime: 2 * 60 * MIN }), pool([drone('a-1', 3 * MIN)]), [])).decisions).toEqual([]);
  });

  it('leaves a busy drone alone, and one idle past the idle time goes by the idle-time rule', () => {
    expect(decideWith(snap(site(), pool([drone('a-1', 30 * MIN, 1)]), [])).decisions).toEqual([]);
    const r = decideWith(snap(site(), pool([drone('a-1', 11 * MIN)]), []));
    expect(r.decisions[0]!.reason).toMatchObject({ rule: 'idle-time', idleS: 660 });
  });
});
