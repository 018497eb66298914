// estuary's policy inside the real control loop (in-memory sites and batch system, virtual
// clock): the DataSource asked once an interval, a failure keeping the last answer, sizes looked
// up once per URL, the chosen site pre-warmed once, spot drones bought and priced as spot, and
// the decision's sentence in the log, the API, the CLI table and the page.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { MemoryBatch } from '../../coordinator/batch/memory.ts';
import { VirtualClock } from '../../coordinator/clock.ts';
import { controllerSchema, type EstuaryConfig } from '../../coordinator/config.ts';
import { makeController } from '../../coordinator/controllers.ts';
import { Coordinator, type SiteSettings } from '../../coordinator/coordinator.ts';
import { DEFAULT_COST } from '../../coordinator/cost.ts';
import type { DataSource } from '../../coordinator/data.ts';
import { estuaryPlan } from '../../coordinator/estuary-policy.ts';
import type { PendingJob } from '../../coordinator/model.ts';
import { firstFit } from '../../coordinator/placement.ts';
import { DroneRegistry } from '../../coordinator/registry.ts';
import { MemorySite } from '../../coordinator/sites/memory.ts';
import { buildHttp } from '../../coordinator/status/http.ts';
import { renderPage } from '../../coordinator/status/page.ts';
import { buildStatus, statusTable } from '../../coordinator/status/view.ts';
import { createMetrics } from '../../coordinator/metrics.ts';

const GB = 1e9;
const URL = 's3://kek/run42';

class FakeData implements DataSource {
  holdingsCalls = 0;
  sizeCalls: string[] = [];
  prewarms: [string, readonly string[]][] = [];
  failHoldings = false;
  async holdings(inputs: readonly string[]) {
    this.holdingsCalls++;
    if (this.failHoldings) throw new Error('gateway unreachable');
    return new Map([['tokyo', new Map(inputs.map((u) => [u, 38 * GB] as const))]]);
  }
  async size(url: string) {
    this.sizeCalls.push(url);
    return 40 * GB;
  }
  async prewarm(site: string, urls: readonly string[]) {
    this.prewarms.push([site, urls]);
  }
}

function world(sites: SiteSettings[], data: DataSource) {
  const clock = new VirtualClock(5 * 86_400_000);
  const adapters = new Map(sites.map((s) => [s.name, new MemorySite(s.name, clock, 3000)]));
  const batch = new MemoryBatch([...adapters.values()]);
  const registry = DroneRegistry.open(mkdtempSync(join(tmpdir(), 'estuary-place-')));
  const lines: string[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => lines.push(s) });
  const c = controllerSchema.parse({ type: 'estuary' }) as EstuaryConfig;
  const coordinator = new Coordinator({
    registry,
    batch,
    sites: adapters,
    siteSettings: sites,
    machineTypes: { small: { cores: 2, memory: 4 * 1024 ** 3, features: ['cloud'] } },
    policy: { controllerFor: () => makeController(c), placement: firstFit, plan: (s) => estuaryPlan(s, c) },
    intervalMs: 1000,
    clock,
    log,
    prefix: 'es-',
    data,
    markets: true,
    steer: {},
    storage: [{ name: 'kek', urls: ['s3://kek/'], egressPerGb: 0.09 }],
  });
  const tick = async () => {
    clock.advance(1000);
    return coordinator.tick();
  };
  return { clock, adapters, batch, registry, coordinator, lines, tick };
}

const site = (name: string, price: number, o: Partial<SiteSettings> = {}, cost = {}): SiteSettings => ({
  name,
  quota: 4,
  min: 0,
  idleTime: 60_000,
  minLifetime: 0,
  bootTimeout: 60_000,
  costPerCoreHour: price,
  cost: { ...DEFAULT_COST, bootLatencyMs: 3000, ...cost },
  machineTypes: ['small'],
  ...o,
});
const jobs = (n: number): PendingJob[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `j${i}`,
    partition: 'hybrid',
    cpus: 1,
    memoryMb: 100,
    constraints: [],
    inputs: [{ url: URL }],
    timeLimitMs: 1_200_000,
    submittedAt: 0,
    reason: 'Resources',
  }));

describe("estuary's policy in the control loop", () => {
  it('asks where the data is each interval, sizes once, pre-warms once, and explains every start everywhere', async () => {
    const data = new FakeData();
    const w = world([site('cheap', 0.03), site('tokyo', 0.05)], data);
    w.batch.pending = jobs(10);
    const first = await w.tick();
    expect(data.holdingsCalls).toBe(1);
    expect(data.sizeCalls).toEqual([URL]);
    expect(first.decisions.map((d) => d.kind === 'start' && d.site)).toEqual(['tokyo', 'tokyo', 'tokyo']);
    expect(data.prewarms).toEqual([['tokyo', [URL]]]);
    // Bought on demand, and said so to the site (an ec2 site set to spot must not buy spot here).
    expect([...w.adapters.get('tokyo')!.instances.values()].map((i) => i.spec.market)).toEqual(['on-demand', 'on-demand', 'on-demand']);
    expect(first.prewarmed).toEqual({ tokyo: [URL] });
    const why = '10 pending jobs need s3://kek/run42 (40 GB, 38 GB cached at tokyo): tokyo on-demand $0.10/h, 3 new drones; cheap +$4.17 a job; each runs 20 min (time limit)';
    expect(first.decisions[0]!.reason.why).toBe(why);

    // A failing DataSource keeps the last answer: the placement does not flip to the cheap site.
    data.failHoldings = true;
    w.batch.pending = [...jobs(10), ...jobs(14).slice(10).map((j) => ({ ...j, id: `k${j.id}` }))];
    const second = await w.tick();
    expect(data.holdingsCalls).toBe(2);
    expect(data.sizeCalls).toEqual([URL]); // remembered
    expect(second.decisions.filter((d) => d.kind === 'start').map((d) => d.kind === 'start' && d.site)).toEqual(['tokyo']);
    expect(data.prewarms).toHaveLength(1); // not asked again while it runs

    // The sentence in the log, the API, the CLI table and the page.
    expect(w.lines.some((l) => JSON.parse(l).msg === why)).toBe(true);
    expect(w.lines.some((l) => /cannot read what the caches hold/.test(l))).toBe(true);
    const view = () => buildStatus(w.registry.all(), [site('cheap', 0.03), site('tokyo', 0.05)], () => 2, w.coordinator.last, w.clock.now());
    const app = buildHttp({ view, timeline: () => [], registry: w.registry, metrics: createMetrics(view).registry });
    const status = (await app.inject('/api/v1/status')).json();
    expect(status.drones.find((d: { site: string }) => d.site === 'tokyo').startReason.why).toBe(why);
    expect(status.pools.find((p: { pool: string }) => p.pool === 'tokyo/small').reason.rule).toBe('estuary');
    expect(status.prewarmed).toEqual({});
    const now = '14 pending jobs need s3://kek/run42 (40 GB, 38 GB cached at tokyo): tokyo on-demand $0.10/h, 1 new drone';
    expect(statusTable(view())).toContain(now);
    expect(renderPage(view())).toContain(now);
    // An input outside every storage location is neither sized nor pre-warmed: users write job
    // comments, and the coordinator must not HEAD or have gateways fetch whatever they name.
    w.batch.pending = [...w.batch.pending, { ...jobs(1)[0]!, id: 'x1', inputs: [{ url: 'http://169.254.169.254/latest/meta-data/' }] }];
    await w.tick();
    expect(data.sizeCalls).toEqual([URL]);
    expect(data.prewarms.flatMap(([, u]) => u)).not.toContain('http://169.254.169.254/latest/meta-data/');
    await app.close();
    w.registry.close();
  });

  it('steers placed jobs to their site once, and moves them when the site falls ill', async () => {
    const data = new FakeData();
    const w = world([site('cheap', 0.03), site('tokyo', 0.05)], data);
    w.batch.home = ['home', 'x86']; // every home node carries these; the first no drone carries is used
    w.batch.pending = jobs(4);
    await w.tick();
    expect(w.batch.steered).toEqual([{ jobIds: ['j0', 'j1', 'j2', 'j3'], features: 'site_tokyo|home' }]);
    expect(w.batch.pending[0]!.constraints).toEqual([['site_tokyo', 'home']]);
    await w.tick();
    expect(w.batch.steered).toHaveLength(1); // read back as ours: not steered again
    // A job with a constraint of its own is never rewritten, even one that looks like ours.
    w.batch.pending = [...w.batch.pending, { ...jobs(5)[4]!, constraints: [['cloud']] }, { ...jobs(6)[5]!, constraints: [['site_tokyo']] }];
    await w.tick();
    expect(w.batch.steered).toHaveLength(1);
    // tokyo's API fails: its drones keep their state, new work goes to cheap, steered jobs move.
    w.adapters.get('tokyo')!.down = true;
    await w.tick();
    await w.tick();
    expect(w.batch.steered.at(-1)).toEqual({ jobIds: ['j0', 'j1', 'j2', 'j3'], features: 'site_cheap|home' });
    // The user's own site_tokyo stays: never moved to cheap with the others.
    expect(w.batch.steered.flatMap((x) => x.jobIds)).not.toContain('j5');
    expect(w.lines.some((l) => JSON.parse(l).msg === 'steered 4 job(s) to cheap')).toBe(true);
    w.registry.close();
  });

  it('steers nothing when no feature lets a steered job still run at home', async () => {
    const w = world([site('cheap', 0.03), site('tokyo', 0.05)], new FakeData());
    w.batch.home = ['cloud']; // the only common home feature is one drones carry too: no use
    w.batch.pending = jobs(4);
    await w.tick();
    await w.tick();
    expect(w.batch.steered).toEqual([]);
    expect(w.lines.filter((l) => JSON.parse(l).msg.startsWith('steering off: no feature every home node carries'))).toHaveLength(1);
    w.registry.close();
  });

  it('buys spot drones, deploys them as spot, prices them at spot, and stops at the budget', async () => {
    const data = new FakeData();
    // Spot $0.01 a core-hour: a 2-core drone budgeted for 3 s boot + 20 min ≈ $0.0067; $0.015 a day fits two.
    const aws = site('aws', 0.1, {}, { spotPerCoreHour: 0.01, budgetPerDay: 0.015 });
    const w = world([aws], data);
    w.batch.pending = jobs(10).map((j) => ({ ...j, inputs: [] }));
    const r = await w.tick();
    expect(r.decisions.map((d) => d.kind === 'start' && d.market)).toEqual(['spot', 'spot']);
    expect(w.registry.all().map((d) => d.market)).toEqual(['spot', 'spot']);
    expect([...w.adapters.get('aws')!.instances.values()].map((i) => i.spec.market)).toEqual(['spot', 'spot']);
    expect(r.pools.find((p) => p.pool === 'aws/small/spot')!.reason.why).toBe(
      '10 pending jobs, no declared inputs: aws spot $0.02/h, 2 new drones; no more drones: $0.00 spent or held today, budget $0.01 a day; aws over budget; each runs 20 min (time limit)',
    );
    w.clock.advance(3_600_000);
    const view = buildStatus(w.registry.all(), [aws], () => 2, w.coordinator.last, w.clock.now());
    expect(view.drones[0]).toMatchObject({ market: 'spot', cost: 0.02 });
    expect(view.sites[0]).toMatchObject({ spotPerCoreHour: 0.01, budgetPerDay: 0.015 });
    w.registry.close();
  });
});
