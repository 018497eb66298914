// The simulator: the real Coordinator (control loop, controllers or estuary's policy, drone
// state machine, SQLite registry) on a VirtualClock, against SimSites and a SimBatch. The loop is
// event-driven: the clock jumps to the next job arrival, job end, boot, reclaim or control-loop
// interval, whichever comes first, so simulated hours cost what happens in them, not their
// length. The coordinator is built exactly as `estuary coordinator` builds it from a config; the
// policy is chosen only by the controller setting (docs/BENCHMARKING.md, "Coordinator").

import { pino } from 'pino';
import type { Logger } from '../../lib/log.ts';
import { VirtualClock } from '../clock.ts';
import { type ControllerConfig, controllerSchema, HISTORY_EVERY_MS } from '../config.ts';
import { Coordinator, type SiteSettings } from '../coordinator.ts';
import type { DataSource } from '../data.ts';
import type { SiteCost } from '../model.ts';
import { DroneRegistry } from '../registry.ts';
import { policyFor, siteCost, storageLocations } from '../service.ts';
import { type JobEnd, SimBatch } from './batch.ts';
import { EventHeap, seeded } from './heap.ts';
import type { Scenario } from './scenario.ts';
import { type SiteEvent, SimSite } from './site.ts';
import { World } from './world.ts';
import type { SimResult, TimelineSample } from '../../lib/sim-result.ts';

/** The policies the bench compares, by controller type, with the name the report uses. */
export const POLICY_NAMES: Readonly<Record<ControllerConfig['type'], string>> = {
  threshold: 'lsf-rc',
  linear: 'cobald-linear',
  relative: 'cobald-relative',
  glideinwms: 'glideinwms',
  'slurm-power': 'slurm-power',
  estuary: 'estuary',
};

/** Every controller type the config accepts, each with its documented defaults and nothing else. */
export function policies(): { name: string; controller: ControllerConfig }[] {
  return Object.entries(POLICY_NAMES).flatMap(([type, name]) => {
    const r = controllerSchema.safeParse({ type });
    return r.success ? [{ name, controller: r.data }] : [];
  });
}

export type { SimResult, TimelineSample } from '../../lib/sim-result.ts';


const START = Date.UTC(2026, 0, 5);
const PREFIX = 'sim-';
/** After the last job, drones get this long to be released before the run is cut. */
const DRAIN_GRACE_MS = 6 * 3_600_000;
/** Nothing running, nothing booting, nothing arriving for this long: the rest can never run. */
const STUCK_MS = 24 * 3_600_000;

type Ev = SiteEvent | JobEnd;

function homeCost(s: Scenario): SiteCost {
  const link = { egressPerGb: 0, bandwidthBps: s.home.bandwidth, rttMs: 0 };
  return {
    spotInterruptionRate: 0,
    egressPerGb: 0,
    link,
    links: Object.fromEntries(Object.entries(s.storage).map(([n, st]) => [n, { ...link, egressPerGb: st.egressPerGb }])),
    bootLatencyMs: 0,
  };
}

export interface SimOptions {
  readonly seed?: number;
  readonly log?: Logger;
  /** Called every simulated hour with the fraction of jobs finished (progress lines). */
  readonly progress?: (done: number, total: number) => void;
  /**
   * Drones started without a market are bought on spot at every site that sells it, as an ec2
   * site configured `spot: true` does: a baseline given the spot market (LSF RC spot templates,
   * GlideinWMS spot entries, ParallelCluster `CapacityType: SPOT`).
   */
  readonly spot?: boolean;
}

/** The scenario with no spot market anywhere: every site sells on demand only. */
export function onDemandOnly(s: Scenario): Scenario {
  return {
    ...s,
    name: `${s.name}-on-demand`,
    sites: s.sites.map((site) => {
      const { spotPerCoreHour: _, ...config } = site.config;
      return { ...site, spot: false, config: config as typeof site.config };
    }),
  };
}

/** True when some site of the scenario sells spot. */
export const sellsSpot = (s: Scenario): boolean => s.sites.some((site) => site.config.spotPerCoreHour !== undefined);

export async function simulate(s: Scenario, controller: ControllerConfig, o: SimOptions = {}): Promise<SimResult> {
  const wall = performance.now();
  const log = o.log ?? (pino({ level: 'silent' }) as unknown as Logger);
  const clock = new VirtualClock(START);
  const random = seeded(o.seed ?? 1);
  const heap = new EventHeap<Ev>();
  const storage = storageLocations(s.storage);
  const costs = new Map(s.sites.map((site) => [site.name, siteCost(site.config, s.storage)]));
  const world = new World(
    [{ name: 'home', ...(s.home.at ? { at: s.home.at } : {}), cost: homeCost(s) }, ...s.sites.map((site) => ({ name: site.name, ...(site.at ? { at: site.at } : {}), cost: costs.get(site.name)! }))],
    storage,
    s.homeLocation ?? s.home.at,
    START,
  );
  const spotAt = (c: Scenario['sites'][number]) => (o.spot && c.config.spotPerCoreHour !== undefined ? { ...c, spot: true } : c);
  const sites = new Map(s.sites.map((c) => [c.name, new SimSite(spotAt(c), clock, random, world, (ev) => heap.push(ev))]));
  const batch = new SimBatch(clock, world, (ev) => heap.push(ev));
  batch.instanceAlive = (name) => {
    for (const site of sites.values()) if (site.instances.has(name)) return true;
    return false;
  };
  batch.holdNew = controller.type === 'estuary' && controller.hold && controller.steer;
  batch.addHome(s.home.nodes, s.home.cores, s.home.memoryMb, s.home.feature);
  const sizes = new Map<string, number>();
  for (const j of s.trace.jobs) for (const i of j.inputs) sizes.set(i.url, i.bytes);
  const data: DataSource = {
    holdings: async (inputs) => {
      // The home cluster's cache and storage are reported as the place "home", as its gateway would.
      return world.holdings(inputs, sizes, clock.now());
    },
    size: async (url) => sizes.get(url),
    prewarm: async (site, urls) => {
      for (const url of urls) world.fetch(site, url, sizes.get(url) ?? 0, clock.now());
    },
  };
  const siteSettings: SiteSettings[] = s.sites.map((site) => ({
    name: site.name,
    quota: site.config.quota,
    min: site.config.min,
    machineTypes: site.config.machineTypes,
    costPerCoreHour: site.config.costPerCoreHour,
    cost: costs.get(site.name)!,
    idleTime: site.config.idleTime ?? s.idleTimeMs,
    bootTimeout: site.config.bootTimeout ?? s.bootTimeoutMs,
    minLifetime: site.config.minLifetime ?? 0,
  }));
  const registry = DroneRegistry.inMemory();
  const c = controller;
  // The loop's policy options exactly as `estuary coordinator` derives them from the setting.
  // The home nodes' feature is a fact of the site, not a tuning: steered jobs may run at home.
  const wiring = policyFor(c.type === 'estuary' ? { ...c, homeFeature: c.homeFeature ?? s.home.feature } : c);
  const coordinator = new Coordinator({
    registry,
    batch,
    sites,
    siteSettings,
    machineTypes: s.machineTypes,
    ...wiring,
    // estuary's policy learns run times from the jobs that finished, as from sacct in production.
    ...(c.type === 'estuary' ? { history: { everyMs: HISTORY_EVERY_MS } } : {}),
    storage,
    data,
    intervalMs: s.intervalMs,
    clock,
    log,
    prefix: PREFIX,
  });

  const jobs = s.trace.jobs;
  const simJobs: { submittedAt: number; firstStart?: number; endedAt?: number }[] = [];
  let arrived = 0;
  let finished = 0;
  let ticks = 0;
  let events = 0;
  let lastEnd = START;
  let nextTick = START;
  let lastFinished = 0;
  let progressAt = START;
  let nextProgress = START + 3_600_000;
  const timeline: TimelineSample[] = [];
  const live = () => [...sites.values()].reduce((n, site) => n + site.instances.size, 0);
  const end = START + s.maxTimeMs;
  try {
    for (;;) {
      const nextArrival = arrived < jobs.length ? START + jobs[arrived]!.submit : Infinity;
      const t = Math.min(nextTick, heap.peekAt(), nextArrival);
      if (t > end) break;
      clock.advance(t - clock.now());
      world.advance(t);
      while (arrived < jobs.length && START + jobs[arrived]!.submit <= t) batch.submit(jobs[arrived++]!, t);
      while (heap.peekAt() <= t) {
        const ev = heap.pop()!;
        events++;
        if (ev.kind === 'end') {
          if (batch.finish(ev)) {
            finished++;
            lastEnd = Math.max(lastEnd, ev.at);
            simJobs.push(ev.job);
          }
        } else {
          const site = sites.get(ev.site)!;
          const booted = site.event(ev);
          if (booted) batch.addNode(ev.id, ev.site, booted.spec.cores, booted.spec.memoryMb, booted.spec.features);
          else if (ev.kind === 'reclaim') batch.lose(ev.id);
        }
      }
      batch.schedule();
      if (t >= nextTick) {
        await coordinator.tick();
        ticks++;
        // A node whose instance was stopped under it is gone, with its jobs requeued.
        for (const n of [...batch.nodes_.values()]) if (!n.home && !batch.instanceAlive(n.name)) batch.lose(n.name);
        batch.schedule();
        const a = world.accounts;
        timeline.push({ t: (t - START) / 1000, pending: batch.pendingCount, home: batch.running.home, cloud: batch.running.drones, instances: live(), compute: a.computeDollars, egress: a.egressDollars });
        nextTick = t + s.intervalMs;
        if (t >= nextProgress) {
          o.progress?.(finished, jobs.length);
          nextProgress = t + 3_600_000;
        }
      }
      if (finished === jobs.length && (live() === 0 || t > lastEnd + DRAIN_GRACE_MS)) break;
      if (finished !== lastFinished || heap.size > 0 || arrived < jobs.length || live() > 0) {
        lastFinished = finished;
        progressAt = t;
      } else if (t - progressAt > STUCK_MS) break;
    }
  } finally {
    registry.close();
  }
  world.advance(clock.now());
  const waits = simJobs.map((j) => (j.firstStart! - j.submittedAt) / 1000).sort((x, y) => x - y);
  const a = world.accounts;
  const first = jobs.length ? START + jobs[0]!.submit : START;
  return {
    scenario: s.name,
    policy: POLICY_NAMES[c.type],
    jobs: jobs.length,
    finished,
    makespanS: finished ? (lastEnd - first) / 1000 : NaN,
    meanWaitS: waits.length ? waits.reduce((x, y) => x + y, 0) / waits.length : NaN,
    p95WaitS: waits.length ? waits[Math.min(waits.length - 1, Math.floor(waits.length * 0.95))]! : NaN,
    idleCoreHours: (a.paidCoreMs - a.busyCoreMs) / 3_600_000,
    paidCoreHours: a.paidCoreMs / 3_600_000,
    computeDollars: a.computeDollars,
    egressDollars: a.egressDollars,
    wanBytes: a.wanBytes,
    wanByLink: { ...a.byLink },
    dronesStarted: [...sites.values()].reduce((n, site) => n + site.deploys, 0),
    spotReclaims: [...sites.values()].reduce((n, site) => n + site.reclaims, 0),
    starts: batch.starts.all,
    steeredStarts: batch.starts.steered,
    apiErrors: [...sites.values()].reduce((n, site) => n + site.apiErrors, 0),
    ticks,
    events,
    wallMs: performance.now() - wall,
    timeline,
  };
}
