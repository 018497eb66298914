// estuary's policy on hand-made snapshots, each with the decision worked out by hand: data that is
// already cached beats a cheaper site when egress dominates, a budget stops a start, spot is
// bought only when its expected rework costs less than the price difference, a turnaround sizes
// the burst, and work with no declared inputs bursts like queue pressure.

import { describe, expect, it } from 'vitest';
import { controllerSchema } from '../../coordinator/config.ts';
import { DEFAULT_COST } from '../../coordinator/cost.ts';
import { RunTimeHistory } from '../../coordinator/run-times.ts';
import { estuaryPlan } from '../../coordinator/estuary-policy.ts';
import { makeController } from '../../coordinator/controllers.ts';
import type { Market, PendingJob, PoolView, SiteCost, SiteView, Snapshot } from '../../coordinator/model.ts';
import { firstFit } from '../../coordinator/placement.ts';
import { decide } from '../../coordinator/policy.ts';
import { policyFor } from '../../coordinator/service.ts';

const NOW = 1_000 * 86_400_000 + 3_600_000;
const GB = 1e9;
const estuary = controllerSchema.parse({ type: 'estuary' }) as Extract<ReturnType<typeof controllerSchema.parse>, { type: 'estuary' }>;
const site = (name: string, price: number, cost: Partial<SiteCost> = {}, o: Partial<SiteView> = {}): SiteView => ({
  name,
  quota: 4,
  min: 0,
  healthy: true,
  idleTime: 60_000,
  minLifetime: 0,
  bootTimeout: 600_000,
  costPerCoreHour: price,
  cost: { ...DEFAULT_COST, ...cost },
  ...o,
});
const pool = (s: string, market?: Market, cores = 2): PoolView => ({
  key: market === 'spot' ? `${s}/small/spot` : `${s}/small`,
  site: s,
  machineType: 'small',
  ...(market ? { market } : {}),
  cores,
  memoryMb: 4000,
  features: ['estuary', `site_${s}`, 'type_small', 'cloud'],
  drones: [],
});
const job = (id: string, o: Partial<PendingJob> = {}): PendingJob => ({
  id,
  partition: 'hybrid',
  cpus: 1,
  memoryMb: 100,
  constraints: [],
  inputs: [],
  submittedAt: NOW - 1000,
  reason: 'Resources',
  ...o,
});
const jobs = (n: number, o: Partial<PendingJob> = {}) => Array.from({ length: n }, (_, i) => job(`j${i}`, o));
const snap = (sites: SiteView[], pools: PoolView[], pending: PendingJob[], extra: Partial<Snapshot> = {}): Snapshot => ({
  now: NOW,
  batchHealthy: true,
  pending,
  sites,
  pools,
  ...extra,
});
const kek = [{ name: 'kek', urls: ['s3://kek/'], egressPerGb: 0.09 }];
const threshold = makeController(controllerSchema.parse({ type: 'threshold' }));
const withPlan = { controllerFor: () => threshold, placement: firstFit, intervalMs: 1000, plan: (s: Snapshot) => estuaryPlan(s, estuary) };

describe("estuary's policy", () => {
  it('sends work to the site holding 38 of its 40 GB over a cheaper site without the data, and says why', () => {
    // 20-minute jobs: within the hour a core runs two after the 2-minute boot, so 10 jobs need
    // 3 drones. cheap: 10 × 1/3 h × $0.03 = $0.10, plus 40 GB × $0.09 = $3.60 of egress.
    // tokyo: 10 × 1/3 h × $0.05 = $0.17, plus 2 GB × $0.09 = $0.18.
    const pending = jobs(10, { timeLimitMs: 1_200_000, inputs: [{ url: 's3://kek/run42', bytes: 40 * GB }] });
    const s = snap([site('cheap', 0.03), site('tokyo', 0.05)], [pool('cheap'), pool('tokyo')], pending, {
      storage: kek,
      holdings: new Map([['tokyo', new Map([['s3://kek/run42', 38 * GB]])]]),
    });
    const plan = estuaryPlan(s, estuary);
    expect(plan.get('tokyo/small')!.jobs).toHaveLength(10);
    expect(plan.get('cheap/small')!.jobs).toHaveLength(0);
    const r = plan.get('tokyo/small')!.reason;
    expect(r).toMatchObject({ rule: 'estuary', pendingJobs: 10, inputBytes: 40e9, cachedBytes: 38e9, inputCost: 0.18, newDrones: 3 });
    expect(r.why).toMatch(/^10 pending jobs need s3:\/\/kek\/run42 \(40 GB, 38 GB cached at tokyo\): tokyo on-demand \$0\.10\/h, 3 new drones; cheap \+\$\d\.\d\d a job; each runs 20 min \(time limit\)$/);
    expect(plan.get('tokyo/small')!.prewarm).toEqual(['s3://kek/run42']);
    // Through the policy: the starts carry the same reason, and the site is asked to pre-warm.
    const d = decide(s, new Map(), withPlan);
    expect(d.decisions.filter((x) => x.kind === 'start').map((x) => x.kind === 'start' && x.site)).toEqual(['tokyo', 'tokyo', 'tokyo']);
    expect(d.decisions[0]!.reason.why).toBe(r.why);
    expect(d.prewarm.get('tokyo')).toEqual(['s3://kek/run42']);
  });

  it('takes the cheaper site when the data is free to move and WAN bytes are not priced', () => {
    const pending = jobs(10, { timeLimitMs: 1_200_000, inputs: [{ url: 's3://kek/run42', bytes: 40 * GB }] });
    const s = snap([site('cheap', 0.03), site('tokyo', 0.05)], [pool('cheap'), pool('tokyo')], pending, {
      storage: [{ name: 'kek', urls: ['s3://kek/'], egressPerGb: 0 }],
      holdings: new Map([['tokyo', new Map([['s3://kek/run42', 38 * GB]])]]),
    });
    expect(estuaryPlan(s, { ...estuary, wanPerGb: 0 }).get('cheap/small')!.jobs).toHaveLength(10);
    // At the default price per WAN GB, the 40 GB the cheaper site would pull outweigh its saving.
    expect(estuaryPlan(s, estuary).get('tokyo/small')!.jobs).toHaveLength(10);
  });

  it('never starts a drone that would pass the daily budget, and says so', () => {
    // A 2-core drone at $0.50/core-h for 2 min boot + 1 h = $1.03; $0.50 spent, budget $1.
    const s = snap([site('a', 0.5, { budgetPerDay: 1 }, { spentToday: 0.5 })], [pool('a')], jobs(3));
    const d = decide(s, new Map(), withPlan);
    expect(d.decisions).toEqual([]);
    expect(d.pools[0]!.reason.why).toBe('3 pending jobs wait: a over budget ($0.50 spent or held today, a drone $1.03, budget $1.00 a day)');
    // Baseline controllers go through the same budget check.
    const t = decide(s, new Map(), { controllerFor: () => threshold, placement: firstFit, intervalMs: 1000 });
    expect(t.decisions).toEqual([]);
    expect(t.pools[0]!.reason).toMatchObject({ rule: 'budget', spentToday: 0.5, droneCost: 1.03, budgetPerDay: 1 });
    expect(t.pools[0]!.reason.why).toMatch(/^a: \$0\.50 spent or held today .* would pass the budget of \$1\.00 a day: not started$/);
    // With $2.50 left two drones fit, not three.
    const rich = snap([site('a', 0.5, { budgetPerDay: 3 }, { spentToday: 0.5 })], [pool('a')], jobs(6));
    expect(decide(rich, new Map(), withPlan).decisions).toHaveLength(2);
    expect(decide(rich, new Map(), { controllerFor: () => threshold, placement: firstFit, intervalMs: 1000 }).decisions).toHaveLength(2);
  });

  it('buys spot when the expected rework costs less than the price difference', () => {
    // 1 h jobs: spot at $0.03 with 0.01 reclaims/h costs 0.03 × (1 + 0.005) < $0.10 on demand.
    const cheapSpot = site('aws', 0.1, { spotPerCoreHour: 0.03, spotInterruptionRate: 0.01 });
    const s = snap([cheapSpot], [pool('aws'), pool('aws', 'spot')], jobs(4));
    const plan = estuaryPlan(s, estuary);
    expect(plan.get('aws/small/spot')!.jobs).toHaveLength(4);
    expect(plan.get('aws/small/spot')!.reason.why).toContain('aws spot $0.06/h, 2 new drones; aws +$0.07 a job');
    const starts = decide(s, new Map(), withPlan).decisions;
    expect(starts.every((x) => x.kind === 'start' && x.market === 'spot')).toBe(true);
    // 10 reclaims an hour: a 1 h job runs 6 h on average, 0.03 × 6 > 0.10: on demand.
    const risky = snap([site('aws', 0.1, { spotPerCoreHour: 0.03, spotInterruptionRate: 10 })], [pool('aws'), pool('aws', 'spot')], jobs(4));
    expect(estuaryPlan(risky, estuary).get('aws/small')!.jobs).toHaveLength(4);
  });

  it("keeps a site's minimum on demand only, not once more on its spot pool", () => {
    const s = snap([site('aws', 0.1, { spotPerCoreHour: 0.03 }, { min: 1 })], [pool('aws'), pool('aws', 'spot')], []);
    const starts = decide(s, new Map(), withPlan).decisions;
    expect(starts).toHaveLength(1);
    expect(starts[0]).toMatchObject({ kind: 'start', site: 'aws' });
    expect(starts[0]!.kind === 'start' && starts[0]!.market).not.toBe('spot');
  });

  it('sizes the burst by the turnaround: 20 five-minute jobs fit one drone within an hour', () => {
    const s = snap([site('a', 0.05, {}, { quota: 10 })], [pool('a')], jobs(20, { timeLimitMs: 300_000 }));
    expect(estuaryPlan(s, estuary).get('a/small')!.newDrones).toBe(1);
    const fast = estuaryPlan(s, { ...estuary, turnaround: 600_000 });
    // 10 min: boot 2 min, then one 5-minute job per core: 20 cores, quota 10 drones.
    expect(fast.get('a/small')!.newDrones).toBe(10);
  });

  it('counts busy cores as free after half the waiting jobs\' run time, so short jobs queue instead of buying', () => {
    const busy: PoolView = {
      ...pool('a'),
      drones: [{
        drone: { id: 'a-1', site: 'a', machineType: 'small', state: 'available', createdAt: 0, stateSince: 0, lastBusyAt: NOW, instance: {}, reason: { rule: 't' } },
        node: { status: 'available', cpus: 2, allocCpus: 2, memoryMb: 4000, allocMemoryMb: 200 },
      }],
    };
    // Two 1-minute jobs: the busy cores are expected free in 30 s, long before a new drone boots.
    const plan = estuaryPlan(snap([site('a', 0.05)], [busy], jobs(2, { timeLimitMs: 60_000 })), estuary);
    expect(plan.get('a/small')).toMatchObject({ newDrones: 0, jobs: [{ id: 'j0' }, { id: 'j1' }] });
    // Two 1-hour jobs: busy for another half hour, so within the hour a new drone is needed.
    expect(estuaryPlan(snap([site('a', 0.05)], [busy], jobs(2)), estuary).get('a/small')!.newDrones).toBe(1);
  });

  it('with no declared inputs and unknown run times bursts like queue-pressure placement', () => {
    const s = snap([site('a', 0, {}, { quota: 2 }), site('b', 0, {}, { quota: 2 })], [pool('a'), pool('b')], jobs(6));
    const starts = decide(s, new Map(), withPlan).decisions.map((x) => (x.kind === 'start' ? x.site : ''));
    const baseline = decide(s, new Map(), { controllerFor: () => threshold, placement: firstFit, intervalMs: 1000 }).decisions.map((x) => (x.kind === 'start' ? x.site : ''));
    expect(starts).toEqual(['a', 'a', 'b']);
    expect(starts).toEqual(baseline);
  });

  it('charges results home at the site egress price: NOvA-like output goes where egress is free', () => {
    // 250 MB a job × 100 jobs = 25 GB × $0.09 = $2.25 from aws; the campus cloud charges none.
    const s = snap([site('aws', 0.04, { egressPerGb: 0.09 }), site('campus', 0.05)], [pool('aws'), pool('campus')], jobs(100, { outputBytes: 250e6 }));
    const plan = estuaryPlan(s, estuary);
    expect(plan.get('campus/small')!.jobs.length).toBeGreaterThan(0);
    expect(plan.get('campus/small')!.reason.why).toMatch(/aws \+\$0\.01 a job/);
  });

  it('is selected by the one controller key, as the service and a simulator build it', () => {
    const base = policyFor(controllerSchema.parse({ type: 'glideinwms' }));
    expect(base).toMatchObject({ markets: false });
    expect(base.policy.plan).toBeUndefined();
    const ours = policyFor(controllerSchema.parse({ type: 'estuary', 'home-feature': 'home' }));
    expect(ours).toMatchObject({ markets: true, steer: { homeFeature: 'home' }, policy: { runtimeMs: 3_600_000 } });
    const s = snap([site('a', 0.05)], [pool('a')], jobs(1));
    expect(ours.policy.plan!(s).get('a/small')!.newDrones).toBe(1);
    expect(policyFor(controllerSchema.parse({ type: 'estuary', steer: false })).steer).toBeUndefined();
  });

  it('skips an unhealthy site and names a full one', () => {
    const s = snap(
      [site('full', 0.01, {}, { quota: 0 }), site('sick', 0.01, {}, { healthy: false }), site('ok', 0.2)],
      [pool('full'), pool('sick'), pool('ok')],
      jobs(1),
    );
    expect(estuaryPlan(s, estuary).get('ok/small')!.reason.why).toBe(
      '1 pending job, no declared inputs: ok on-demand $0.40/h, 1 new drone; full full, sick unhealthy; it runs 60 min (configured runtime)',
    );
  });

  it('times and costs work by how long finished jobs of its user, partition and name ran, and says so', () => {
    // Ten jobs with a 4-hour limit: by the limit none can finish within the hour, so each gets a
    // core of its own, as many as the quota (4 drones). Their kind ran 10 minutes before: one
    // drone runs all ten within the hour.
    const pending = jobs(10, { timeLimitMs: 4 * 3_600_000, user: 'ana', name: 'reco' });
    const history = new RunTimeHistory();
    history.add(Array.from({ length: 5 }, (_, i) => ({ id: `f${i}`, user: 'ana', partition: 'hybrid', name: 'reco', elapsedMs: 600_000 })));
    const byLimit = estuaryPlan(snap([site('a', 0.05)], [pool('a')], pending), estuary).get('a/small')!;
    expect(byLimit.newDrones).toBe(4);
    expect(byLimit.reason).toMatchObject({ runS: 14_400, runEstimate: 'time limit' });
    const learned = estuaryPlan(snap([site('a', 0.05)], [pool('a')], pending, { runTimes: history.summary() }), estuary).get('a/small')!;
    expect(learned.newDrones).toBe(1);
    expect(learned.reason).toMatchObject({ runS: 600, runEstimate: 'learned from 5 jobs' });
    expect(learned.reason.why).toMatch(/; each runs 10 min \(learned from 5 jobs\)$/);
  });
});

describe('the home cluster and WAN bytes', () => {
  const storage = [
    { name: 'home-store', urls: ['root://home/'], egressPerGb: 0 },
    { name: 'b-store', urls: ['root://b/'], egressPerGb: 0 },
  ];
  const home = { cores: 16, idleCores: 4, nodeCores: 8, nodeMemoryMb: 64_000, feature: 'home' };
  const holdings = new Map([
    ['home', new Map([['root://home/f1', 3 * GB]])],
    ['uni', new Map([['root://b/f2', 3 * GB]])],
  ]);
  const uni = site('uni', 0, { link: { egressPerGb: 0, bandwidthBps: 10e9, rttMs: 0 } });
  const input = (url: string) => ({ inputs: [{ url, bytes: 3 * GB }], timeLimitMs: 1_800_000 });

  it('runs a job whose data is at home on a free home core, and keeps one whose data is elsewhere off home', () => {
    const plan = estuaryPlan(
      snap([uni], [pool('uni')], [job('a', input('root://home/f1')), job('b', input('root://b/f2'))], { storage, holdings, home }),
      estuary,
    );
    expect(plan.get('home')!.jobs.map((j) => j.id)).toEqual(['a']);
    expect(plan.get('home')!.reason.why).toMatch(/^1 pending job needs root:\/\/home\/f1 \(3 GB, 3 GB cached at home\): the home cluster, free/);
    expect(plan.get('uni/small')!.jobs.map((j) => j.id)).toEqual(['b']);
    expect(plan.get('uni/small')!.awayFromHome).toEqual(['b']);
    expect(plan.get('uni/small')!.reason).toMatchObject({ wanGB: 0, wanCost: 0 });
  });

  it('prices bytes over the WAN even where egress is free: a free site without the data loses to a paid one that holds it', () => {
    const paid = site('paid', 0.01, { link: { egressPerGb: 0, bandwidthBps: 10e9, rttMs: 0 } });
    const held = new Map([['paid', new Map([['root://b/f2', 3 * GB]])]]);
    const pending = [job('b', input('root://b/f2'))];
    const withWan = estuaryPlan(snap([uni, paid], [pool('uni'), pool('paid')], pending, { storage, holdings: held }), estuary);
    expect(withWan.get('paid/small')!.jobs.map((j) => j.id)).toEqual(['b']);
    const noWan = estuaryPlan(snap([uni, paid], [pool('uni'), pool('paid')], pending, { storage, holdings: held }), { ...estuary, wanPerGb: 0 });
    expect(noWan.get('uni/small')!.jobs.map((j) => j.id)).toEqual(['b']);
  });
});

describe('a site whose API is failing', () => {
  const droneView = (id: string, state: 'available' | 'booting', allocCpus: number) => ({
    drone: { id, site: 'a', machineType: 'small', state, createdAt: NOW - 10_000, stateSince: 0, lastBusyAt: NOW, instance: {}, reason: { rule: 't' } },
    node: state === 'available' ? { status: 'available' as const, cpus: 2, allocCpus, memoryMb: 4000, allocMemoryMb: 0 } : { status: 'absent' as const, cpus: 0, allocCpus: 0, memoryMb: 0, allocMemoryMb: 0 },
  });
  const sick = site('a', 0.01, {}, { healthy: false });
  const other = site('b', 0.05);

  it('opens nothing there, but its running nodes and, beside them, its booting drones still take jobs', () => {
    const withRunning: PoolView = { ...pool('a'), drones: [droneView('a-1', 'available', 2), droneView('a-2', 'booting', 0)] };
    // 50-minute jobs: the running node is busy for another 25 min (too late for the hour), the
    // booting drone is up in under 2 min; b would have to open a drone at five times the price.
    const plan = estuaryPlan(snap([sick, other], [withRunning, pool('b')], jobs(2, { timeLimitMs: 3_000_000 })), estuary);
    expect(plan.get('a/small')).toMatchObject({ newDrones: 0, jobs: [{ id: 'j0' }, { id: 'j1' }] });
    expect(plan.get('b/small')!.newDrones).toBe(0);
  });

  it('counts no booting drone where no node of the site runs: it may be down, the work goes elsewhere', () => {
    const onlyBooting: PoolView = { ...pool('a'), drones: [droneView('a-2', 'booting', 0)] };
    const plan = estuaryPlan(snap([sick, other], [onlyBooting, pool('b')], jobs(2, { timeLimitMs: 600_000 })), estuary);
    expect(plan.get('a/small')!.jobs).toEqual([]);
    expect(plan.get('b/small')!.jobs).toHaveLength(2);
  });
});
