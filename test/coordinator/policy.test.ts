// The policy on hand-made snapshots: placement by constraints and room, quota across machine
// types, the standardiser's minimum, FactoryPool's shrink, and the reasons it gives.

import { describe, expect, it } from 'vitest';
import { controllerSchema } from '../../coordinator/config.ts';
import { makeController } from '../../coordinator/controllers.ts';
import type { Drone, DroneView, PendingJob, PoolView, SiteView, Snapshot } from '../../coordinator/model.ts';
import { firstFit } from '../../coordinator/placement.ts';
import { decide } from '../../coordinator/policy.ts';

const NOW = 10_000_000;
const site = (name: string, o: Partial<SiteView> = {}): SiteView => ({
  name,
  quota: 2,
  min: 0,
  healthy: true,
  idleTime: 60_000,
  minLifetime: 0,
  bootTimeout: 60_000,
  costPerCoreHour: 0,
  ...o,
});
const pool = (s: string, drones: DroneView[] = [], type = 'small', cores = 2): PoolView => ({
  key: `${s}/${type}`,
  site: s,
  machineType: type,
  cores,
  memoryMb: 4000,
  features: ['estuary', `site_${s}`, `type_${type}`, 'cloud'],
  drones,
});
const pending = (id: string, cpus = 1, constraints: string[][] = []): PendingJob => ({
  id,
  partition: 'hybrid',
  cpus,
  memoryMb: 100,
  constraints,
  inputs: [],
  submittedAt: NOW - 1000,
  reason: 'Resources',
});
const drone = (id: string, s: string, alloc: number, o: Partial<Drone> = {}): DroneView => ({
  drone: { id, site: s, machineType: 'small', state: 'available', createdAt: 0, stateSince: 0, lastBusyAt: NOW - 1000, instance: {}, reason: { rule: 't' }, ...o },
  node: { status: 'available', cpus: 2, allocCpus: alloc, memoryMb: 4000, allocMemoryMb: alloc * 100 },
});
const snap = (sites: SiteView[], pools: PoolView[], jobs: PendingJob[]): Snapshot => ({ now: NOW, batchHealthy: true, pending: jobs, sites, pools });
const threshold = makeController(controllerSchema.parse({ type: 'threshold' }));
const opts = { controllerFor: () => threshold, placement: firstFit, intervalMs: 1000 };

describe('policy', () => {
  it('spills to the next site when the first is at its quota, and explains each start', () => {
    const r = decide(snap([site('a'), site('b')], [pool('a'), pool('b')], Array.from({ length: 6 }, (_, i) => pending(`j${i}`))), new Map(), opts);
    const starts = r.decisions.filter((d) => d.kind === 'start');
    expect(starts.map((d) => (d.kind === 'start' ? d.site : ''))).toEqual(['a', 'a', 'b']);
    expect(starts[0]!.reason).toMatchObject({ rule: 'threshold-met', pendingJobs: 4, pendingCores: 4 });
  });

  it('counts only jobs a drone could run: constraints, cores and memory', () => {
    const jobs = [pending('home', 1, [['home']]), pending('big', 16), pending('b-only', 1, [['site_b']])];
    const r = decide(snap([site('a'), site('b')], [pool('a'), pool('b')], jobs), new Map(), opts);
    expect(r.decisions).toEqual([expect.objectContaining({ kind: 'start', site: 'b' })]);
    expect(r.pools.map((p) => p.pendingJobs)).toEqual([0, 1]);
  });

  it('shares a site quota between its machine types', () => {
    const s = site('a', { quota: 3 });
    const r = decide(snap([s], [pool('a', [], 'small'), pool('a', [], 'large', 8)], [pending('x', 8), ...Array.from({ length: 8 }, (_, i) => pending(`j${i}`))]), new Map(), opts);
    expect(r.decisions.filter((d) => d.kind === 'start')).toHaveLength(3);
  });

  it('keeps the minimum even when idle past the idle time', () => {
    const d = drone('a-1', 'a', 0, { lastBusyAt: 0 });
    const r = decide(snap([site('a', { min: 1 })], [pool('a', [d])], []), new Map(), opts);
    expect(r.decisions).toEqual([]);
    const r2 = decide(snap([site('a', { min: 0 })], [pool('a', [d])], []), new Map(), opts);
    expect(r2.decisions).toEqual([{ kind: 'release', droneId: 'a-1', reason: { rule: 'idle-time', idleS: NOW / 1000, limitS: 60 } }]);
  });

  it('shrinks like FactoryPool: least utilised first, never a drone younger than its minimum lifetime', () => {
    const linear = makeController(controllerSchema.parse({ type: 'linear' }));
    const drones = [drone('a-1', 'a', 2), drone('a-3', 'a', 0, { createdAt: NOW - 10 }), drone('a-2', 'a', 0)];
    const s = site('a', { quota: 3, minLifetime: 60_000 });
    // utilisation = mean(1, 0, 0) = 0.33 < 0.5: demand 6 − 1/s × 2 s = 4, one whole drone too many.
    const o = { ...opts, controllerFor: () => linear, intervalMs: 2000 };
    const r = decide(snap([s], [pool('a', drones)], []), new Map(), o);
    expect(r.decisions).toEqual([expect.objectContaining({ kind: 'release', droneId: 'a-2' })]);
    expect(r.decisions[0]!.reason.rule).toBe('linear-low-utilisation:shrink');
    // COBalD's relative controller at 0.9 × 6 = 5.4 leaves less than a drone of excess: no release.
    const relative = makeController(controllerSchema.parse({ type: 'relative' }));
    expect(decide(snap([s], [pool('a', drones)], []), new Map(), { ...opts, controllerFor: () => relative }).decisions).toEqual([]);
  });

  it('starts nothing at an unhealthy site, and decides nothing while the batch system is unreadable', () => {
    const r = decide(snap([site('a', { healthy: false })], [pool('a')], [pending('x')]), new Map(), opts);
    expect(r.decisions).toEqual([]);
    expect(r.pools[0]!.reason.rule).toBe('site-unhealthy');
    const r2 = decide({ ...snap([site('a')], [pool('a', [drone('a-1', 'a', 0, { lastBusyAt: 0 })])], []), batchHealthy: false }, new Map(), opts);
    expect(r2.decisions).toEqual([]);
  });
});
