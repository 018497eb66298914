// The spot tail of estuary's policy: spot stops taking work once the jobs its drones take next
// would, if reclaimed halfway through, finish past the end of the work and a reclaim among them
// is more likely than not at the site's stated rate. Worked by hand; then through the plan, where
// the tail goes on demand and the spot drones drain.

import { describe, expect, it } from 'vitest';
import { controllerSchema } from '../../coordinator/config.ts';
import { makeController } from '../../coordinator/controllers.ts';
import { DEFAULT_COST } from '../../coordinator/cost.ts';
import { estuaryPlan } from '../../coordinator/estuary-policy.ts';
import type { PendingJob, PoolView, SiteView, Snapshot } from '../../coordinator/model.ts';
import { firstFit } from '../../coordinator/placement.ts';
import { decide } from '../../coordinator/policy.ts';
import { spotTail } from '../../coordinator/spot-tail.ts';

const H = 3_600_000;
const NOW = 1_000 * 86_400_000;
const BOOT = 0.1 * H;

describe('spotTail', () => {
  // Two waves of 2-hour jobs: the first starts now, the second at 2 h; the work ends at 4 h.
  const wave = (start: number, n: number) => Array.from({ length: n }, () => ({ start, finish: start + 2 * H, runMs: 2 * H, cpus: 1 }));

  it('keeps spot while the jobs taken next leave room for a restart before the end', () => {
    // Next jobs finish at 2 h; reclaimed at 1 h they restart and end at 1 + 0.1 + 2 = 3.1 h < 4 h.
    expect(spotTail([...wave(0, 100), ...wave(2 * H, 100)], [], 4 * H, H, BOOT, 0.01, 2)).toBeUndefined();
  });

  it('closes spot for the last wave: 100 jobs × 2 h on 2-core drones at 0.01 a drone-hour is 1 − e^−1 = 63 %', () => {
    const t = spotTail(wave(0, 100), [], 2 * H, H, BOOT, 0.01, 2);
    expect(t).toMatchObject({ nextFinishMs: 2 * H, endMs: 2 * H, tailJobs: 100 });
    expect(t!.reclaimChance).toBeCloseTo(1 - Math.exp(-1), 6);
  });

  it('keeps spot for a short tail (10 jobs: 10 %), or where the site states no reclaims', () => {
    expect(spotTail(wave(0, 10), [], 2 * H, H, BOOT, 0.01, 2)).toBeUndefined();
    expect(spotTail(wave(0, 100), [], 2 * H, H, BOOT, 0, 2)).toBeUndefined();
  });

  it('counts the jobs placed nowhere for now: 10 placed and 90 waiting close spot', () => {
    const waiting = Array.from({ length: 90 }, () => ({ runMs: 2 * H, cpus: 1 }));
    expect(spotTail(wave(0, 10), waiting, 2 * H, H, BOOT, 0.01, 2)?.tailJobs).toBe(100);
  });

  it('takes the jobs before the tail: the pool closes only once the first tail job is a boot away', () => {
    // 100 jobs now (end at 2 h: reclaimed at 1 h they end by 3.1 h, before the 3.2 h turnaround)
    // and 100 at 1 h (end at 3 h: a restart ends past 3.2 h). Those at 1 h are the tail, an hour off.
    const runs = [...wave(0, 100), ...wave(H, 100)];
    expect(spotTail(runs, [], 3 * H, 3.2 * H, BOOT, 0.01, 2)).toBeUndefined();
    // Once they start within a boot (after 100 short jobs, no tail), spot closes for them.
    const short = wave(0, 100).map((r) => ({ ...r, finish: 0.5 * H, runMs: 0.5 * H }));
    expect(spotTail([...short, ...wave(BOOT / 2, 100)], [], 2.05 * H, H, BOOT, 0.01, 2)).toMatchObject({ tailJobs: 100, nextFinishMs: BOOT / 2 + 2 * H });
  });

  it('a turnaround later than the plan leaves room for restarts: spot stays', () => {
    expect(spotTail(wave(0, 100), [], 2 * H, 8 * H, BOOT, 0.01, 2)).toBeUndefined();
  });
});

describe("estuary's plan at the tail", () => {
  const estuary = controllerSchema.parse({ type: 'estuary' }) as Extract<ReturnType<typeof controllerSchema.parse>, { type: 'estuary' }>;
  const site: SiteView = {
    name: 'aws',
    quota: 100,
    min: 0,
    healthy: true,
    idleTime: 600_000,
    minLifetime: 0,
    bootTimeout: 1_800_000,
    costPerCoreHour: 0.0665,
    cost: { ...DEFAULT_COST, spotPerCoreHour: 0.0133, spotInterruptionRate: 0.01, bootLatencyMs: BOOT },
  };
  const busy = (i: number) => ({
    drone: { id: `s-${i}`, site: 'aws', machineType: 'm', market: 'spot' as const, state: 'available' as const, createdAt: NOW - 2 * H, stateSince: NOW - 2 * H, lastBusyAt: NOW, instance: {}, reason: { rule: 't' } },
    node: { status: 'available' as const, cpus: 2, allocCpus: 2, memoryMb: 7000, allocMemoryMb: 0 },
  });
  const pool = (market: 'spot' | 'on-demand', drones: PoolView['drones'] = []): PoolView => ({ key: `aws/m/${market}`, site: 'aws', machineType: 'm', market, cores: 2, memoryMb: 7000, features: ['site_aws'], drones });
  const jobs = (n: number): PendingJob[] => Array.from({ length: n }, (_, i) => ({ id: `j${i}`, partition: 'p', cpus: 1, memoryMb: 100, constraints: [], inputs: [], submittedAt: NOW - 1000, reason: 'Resources', timeLimitMs: 2 * H }));
  const snap = (pending: PendingJob[], spotDrones: PoolView['drones']): Snapshot => ({ now: NOW, batchHealthy: true, pending, sites: [site], pools: [pool('on-demand'), pool('spot', spotDrones)] });

  it('with a run of work ahead, buys spot', () => {
    const plan = estuaryPlan(snap(jobs(400), []), estuary);
    expect(plan.get('aws/m/spot')!.jobs).toHaveLength(400);
    expect(plan.get('aws/m/spot')!.drain).toBeUndefined();
  });

  it('with only the last wave left, places it on demand and drains the busy spot drones, saying why', () => {
    // 50 busy spot drones (100 cores) and 100 waiting 2-hour jobs: all start when those cores
    // free and end together, so every one of them is the tail.
    const drones = Array.from({ length: 50 }, (_, i) => busy(i));
    const plan = estuaryPlan(snap(jobs(100), drones), estuary);
    const spot = plan.get('aws/m/spot')!;
    expect(spot).toMatchObject({ jobs: [], drain: 50, reason: { tailJobs: 100, drain: 50 } });
    expect(spot.reason.why).toMatch(/^aws spot takes no new job: .* a reclaim among the 100 tail jobs is 63 % likely at 0.01 an instance-hour, so they go on demand; 50 spot drones drain$/);
    expect(plan.get('aws/m/on-demand')!.jobs).toHaveLength(100);
    // The loop drains them: busy drones end their jobs first.
    const threshold = makeController(controllerSchema.parse({ type: 'threshold' }));
    const r = decide(snap(jobs(100), drones), new Map(), { controllerFor: () => threshold, placement: firstFit, intervalMs: 1000, plan: (s) => estuaryPlan(s, estuary) });
    expect(r.decisions.filter((d) => d.kind === 'release')).toHaveLength(50);
  });

  it("reads when busy cores free from their jobs' start times: the tail is near only when they say so", () => {
    // No room for new drones: the 100 waiting jobs wait for the 50 busy drones' cores.
    const full = { ...site, quota: 50 };
    const drones = Array.from({ length: 50 }, (_, i) => busy(i));
    const at = (pending: PendingJob[], running: Snapshot['running']): Snapshot => ({ ...snap(pending, drones), sites: [full], ...(running ? { running } : {}) });
    const runningFor = (startedAgo: number) => drones.flatMap((d) => [0, 1].map(() => ({ node: d.drone.id, cpus: 1, partition: 'p', timeLimitMs: 2 * H, startedAt: NOW - startedAgo })));
    // Unknown starts: every core frees at half the median limit, an hour off: spot keeps the jobs.
    expect(estuaryPlan(at(jobs(100), undefined), estuary).get('aws/m/spot')!.drain).toBeUndefined();
    // Started 1.95 h ago with 2 h limits: the cores free in 3 min, within a boot: the tail is next.
    expect(estuaryPlan(at(jobs(100), runningFor(1.95 * H)), estuary).get('aws/m/spot')).toMatchObject({ jobs: [], drain: 50 });
    // Started a minute ago: two hours off, spot keeps them; a start in the future is not believed.
    expect(estuaryPlan(at(jobs(100), runningFor(60_000)), estuary).get('aws/m/spot')!.drain).toBeUndefined();
    expect(estuaryPlan(at(jobs(100), runningFor(-H)), estuary).get('aws/m/spot')!.drain).toBeUndefined();
  });

  describe('a tail on demand cannot take stays on spot', () => {
    // On demand over budget: a 2-hour on-demand drone is held at 2 × $0.0665 × 2.1 h = $0.28, a
    // spot one at $0.056, and the site allows $0.20 a day. A reclaim rate of 1 an instance-hour
    // makes any tail likely to be reclaimed.
    const poor: SiteView = { ...site, cost: { ...site.cost!, spotInterruptionRate: 1, budgetPerDay: 0.2 } };
    const at = (pending: PendingJob[], spotDrones: PoolView['drones'], running?: Snapshot['running']): Snapshot => ({ ...snap(pending, spotDrones), sites: [poor], ...(running ? { running } : {}) });
    const booting = (i: number, reason: Record<string, number | string>) => ({
      drone: { ...busy(i).drone, state: 'booting' as const, createdAt: NOW - 60_000, stateSince: NOW - 60_000, reason: { rule: 'estuary', ...reason } },
      node: { status: 'absent' as const, cpus: 0, allocCpus: 0, memoryMb: 0, allocMemoryMb: 0 },
    });

    it('keeps the jobs on spot and says why, rather than placing them nowhere', () => {
      const plan = estuaryPlan(at(jobs(2), []), estuary);
      const spot = plan.get('aws/m/spot')!;
      expect(spot.jobs).toHaveLength(2);
      expect(spot.newDrones).toBe(1);
      expect(spot.drain).toBeUndefined();
      expect(spot.reason).toMatchObject({ tailKeptOnSpot: 2, drain: 0 });
      expect(spot.reason.tailJobs).toBeUndefined();
      expect(spot.reason.why).toMatch(/; the 2 jobs stay on spot: on demand cannot take them \(no room or budget\), and a reclaim costs less than not running$/);
      expect(plan.get('aws/m/on-demand')!.jobs).toHaveLength(0);
    });

    it('splits the tail: what on demand can take goes there, the rest stays on spot, and the spot drones those do not use drain', () => {
      // Four busy spot drones whose jobs end in 3 min. Two 2-hour jobs (the oldest) and six of
      // 1 hour, a budget of $0.25: an on-demand drone for 1 hour is held at $0.146, for 2 at
      // $0.28 (over), a spot one for 2 at $0.056.
      const drones = Array.from({ length: 4 }, (_, i) => busy(i));
      const running = drones.flatMap((d) => [0, 1].map(() => ({ node: d.drone.id, cpus: 1, partition: 'p', timeLimitMs: 2 * H, startedAt: NOW - 1.95 * H })));
      const pending = [...jobs(2), ...jobs(6).map((j, i) => ({ ...j, id: `short${i}`, submittedAt: NOW, timeLimitMs: H }))];
      const plan = estuaryPlan({ ...at(pending, drones, running), sites: [{ ...poor, cost: { ...poor.cost!, budgetPerDay: 0.25 } }] }, estuary);
      const spot = plan.get('aws/m/spot')!;
      expect(spot.jobs.map((j) => j.id).sort()).toEqual(['j0', 'j1']);
      expect(plan.get('aws/m/on-demand')!.jobs).toHaveLength(6);
      // A live drone the two jobs do not use would take on-demand tail jobs as it frees: it
      // drains. Placement times busy cores by the cautious guess (30 min here), so the two go on
      // a new spot drone, which it sees finishing them sooner, and all four drain.
      expect(spot).toMatchObject({ newDrones: 1, drain: 4 });
      expect(spot.reason).toMatchObject({ tailKeptOnSpot: 2 });
      expect(spot.reason.tailJobs).toBeUndefined();
    });

    it('keeps every drone of a pool whose whole tail stays on spot: no job of it went on demand', () => {
      const drones = Array.from({ length: 4 }, (_, i) => busy(i));
      const running = drones.flatMap((d) => [0, 1].map(() => ({ node: d.drone.id, cpus: 1, partition: 'p', timeLimitMs: 2 * H, startedAt: NOW - 1.95 * H })));
      const spot = estuaryPlan(at(jobs(2), drones, running), estuary).get('aws/m/spot')!;
      expect(spot.jobs).toHaveLength(2);
      expect(spot.drain).toBeUndefined();
    });

    it('does not flap: the next interval, with its drone booting, keeps the pool as it was', () => {
      const kept = booting(0, { tailKeptOnSpot: 2 });
      const spot = estuaryPlan({ ...at(jobs(2), [kept]), sites: [{ ...poor, spentToday: 0.056 }] }, estuary).get('aws/m/spot')!;
      expect(spot).toMatchObject({ jobs: expect.arrayContaining([expect.objectContaining({ id: 'j0' })]), newDrones: 0, reason: { tailKeptOnSpot: 2 } });
      expect(spot.drain).toBeUndefined();
      // A drone the kept pool let go is no tail drain: it does not hold the pool closed.
      const shrunk = { ...busy(1), drone: { ...busy(1).drone, state: 'draining' as const, reason: { rule: 'estuary:shrink', tailKeptOnSpot: 2 } } };
      expect(estuaryPlan({ ...at(jobs(2), [kept, shrunk]), sites: [{ ...poor, spentToday: 0.056 }] }, estuary).get('aws/m/spot')!.jobs).toHaveLength(2);
    });

    it('with on demand affordable but the quota held by spot drones, waits for them: the pool closes', () => {
      const rich = { ...poor, quota: 4, cost: { ...poor.cost!, budgetPerDay: 100 } };
      const drones = Array.from({ length: 4 }, (_, i) => busy(i));
      const running = drones.flatMap((d) => [0, 1].map(() => ({ node: d.drone.id, cpus: 1, partition: 'p', timeLimitMs: 2 * H, startedAt: NOW - 1.95 * H })));
      const spot = estuaryPlan({ ...at(jobs(8), drones, running), sites: [rich] }, estuary).get('aws/m/spot')!;
      expect(spot).toMatchObject({ jobs: [], drain: 4, reason: { tailJobs: 8 } });
    });
  });

  it('keeps a spot pool draining for the tail closed until its drones are gone', () => {
    const draining = { ...busy(0), drone: { ...busy(0).drone, state: 'draining' as const, reason: { rule: 'estuary:shrink', tailJobs: 100 } } };
    const plan = estuaryPlan(snap(jobs(4), [draining]), estuary);
    expect(plan.get('aws/m/spot')!.jobs).toHaveLength(0);
    expect(plan.get('aws/m/spot')!.reason.why).toBe('aws spot takes no new job: its drones drain for the tail of the work, which goes on demand');
    expect(plan.get('aws/m/on-demand')!.jobs).toHaveLength(4);
  });
});
