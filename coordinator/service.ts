// Wiring: checks the parts of the configuration that refer to each other, builds the adapters,
// opens the registry, reconciles with the sites, and runs the loop and the status server.
// Stopping the coordinator leaves every drone as it is: the next start adopts them.

import { accessSync, constants } from 'node:fs';
import type { Logger } from '../lib/log.ts';
import type { ConfigOf } from '../lib/config/options.ts';
import type { Service } from '../lib/lifecycle.ts';
import { SlurmBatch } from './batch/slurm.ts';
import type { BatchSystem } from './batch/types.ts';
import { systemClock, type Clock } from './clock.ts';
import type { BatchSystemConfig, ControllerConfig, SiteConfig, StorageConfig } from './config.ts';
import { makeController } from './controllers.ts';
import { Coordinator, type CoordinatorOptions, type SiteSettings } from './coordinator.ts';
import { coordinatorErrors } from './errors.ts';
import { createMetrics } from './metrics.ts';
import type { DataSource } from './data.ts';
import { GatewayData, type GatewayEndpoint, gatewayEndpoints } from './data-gateway.ts';
import { estuaryPlan } from './estuary-policy.ts';
import type { SiteCost, Snapshot, StorageLocation } from './model.ts';
import type { coordinatorOptions } from './options.ts';
import { firstFit } from './placement.ts';
import { complaint, killRunningPrograms, runProgram } from './proc.ts';
import { DroneRegistry } from './registry.ts';
import { CommandSite } from './sites/command.ts';
import { NetnsSite } from './sites/netns.ts';
import { Ec2Site, loadEc2Sdk } from './sites/ec2.ts';
import { OpenstackSite } from './sites/openstack.ts';
import type { SiteAdapter } from './sites/types.ts';
import { buildHttp } from './status/http.ts';
import { buildStatus } from './status/view.ts';

export type CoordinatorConfig = ConfigOf<typeof coordinatorOptions>;

export interface Settings {
  readonly config: CoordinatorConfig;
  readonly batchSystem: BatchSystemConfig;
  readonly siteSettings: SiteSettings[];
  /** The sites' gateways, admin tokens read: where the data is. */
  readonly gateways: GatewayEndpoint[];
}

/** Checks what the schemas cannot see alone: references between sections, and presence. */
export function validate(config: CoordinatorConfig): Settings {
  const sites = Object.entries(config.sites);
  if (sites.length === 0) throw coordinatorErrors.noSites();
  if (!config.batchSystem) throw coordinatorErrors.badConfig('batch-system', 'missing; give {type: slurm, partitions: [...]}');
  if (!/^[a-z][a-z0-9-]{0,15}$/.test(config.prefix))
    throw coordinatorErrors.badConfig('prefix', 'lower-case letters, digits and -, at most 16, starting with a letter');
  const siteSettings: SiteSettings[] = [];
  for (const [name, s] of sites) {
    for (const t of s.machineTypes)
      if (!config.machineTypes[t])
        throw coordinatorErrors.badConfig(`sites.${name}.machine-types`, `unknown machine type "${t}"; define it under machine-types`);
    if (s.min > s.quota) throw coordinatorErrors.badConfig(`sites.${name}.min`, `${s.min} is more than the quota ${s.quota}`);
    for (const loc of Object.keys(s.links))
      if (!config.storage[loc])
        throw coordinatorErrors.badConfig(`sites.${name}.links.${loc}`, `unknown storage location "${loc}"; define it under storage`);
    siteSettings.push({
      name,
      quota: s.quota,
      min: s.min,
      machineTypes: s.machineTypes,
      costPerCoreHour: s.costPerCoreHour,
      cost: siteCost(s, config.storage),
      idleTime: s.idleTime ?? config.idleTime,
      bootTimeout: s.bootTimeout ?? config.bootTimeout,
      minLifetime: s.minLifetime ?? config.minLifetime,
    });
  }
  return { config, batchSystem: config.batchSystem, siteSettings, gateways: gatewayEndpoints(config.sites) };
}

/**
 * The site's cost model as the policy reads it: a link to every storage location, each value the
 * site's `links` entry, else the location's egress price and the site's bandwidth and round trip.
 */
export function siteCost(s: SiteConfig, storage: Readonly<Record<string, StorageConfig>>): SiteCost {
  const link = { egressPerGb: 0, bandwidthBps: s.bandwidth, rttMs: s.rtt };
  const links = Object.fromEntries(
    Object.entries(storage).map(([loc, st]) => {
      const l = s.links[loc];
      return [loc, { egressPerGb: l?.egressPerGb ?? st.egressPerGb, bandwidthBps: l?.bandwidth ?? s.bandwidth, rttMs: l?.rtt ?? s.rtt }];
    }),
  );
  return {
    ...(s.spotPerCoreHour !== undefined ? { spotPerCoreHour: s.spotPerCoreHour } : {}),
    spotInterruptionRate: s.spotInterruptionRate,
    egressPerGb: s.egressPerGb,
    link,
    links,
    bootLatencyMs: s.bootLatency,
    ...(s.budgetPerDay !== undefined ? { budgetPerDay: s.budgetPerDay } : {}),
  };
}

/**
 * What the `controller` setting makes of the loop: the baselines' controller with first-fit
 * placement, or estuary's plan with spot pools and steering. Exported so that anything building a
 * Coordinator itself (a simulator) selects policies by the same one key.
 */
export function policyFor(c: ControllerConfig): Pick<CoordinatorOptions, 'policy' | 'markets' | 'steer'> {
  const controller = makeController(c);
  if (c.type !== 'estuary') return { policy: { controllerFor: () => controller, placement: firstFit }, markets: false };
  return {
    policy: { controllerFor: () => controller, placement: firstFit, plan: (snapshot: Snapshot) => estuaryPlan(snapshot, c), runtimeMs: c.runtime },
    markets: true,
    ...(c.steer ? { steer: { ...(c.homeFeature ? { homeFeature: c.homeFeature } : {}), ...(c.hold ? { hold: true } : {}) } } : {}),
  };
}

/** The sites' gateways and discovery, when any is configured; else nothing is known of data. */
function dataSource(settings: Settings): { data?: DataSource } {
  const { config, gateways } = settings;
  const discovery = config.discovery
    ? {
        url: config.discovery,
        sites: new Map(Object.entries(config.sites).map(([name, s]) => [name, s.discoverySite ?? name])),
        timeoutMs: 10_000,
      }
    : undefined;
  return gateways.length || discovery ? { data: new GatewayData(gateways, discovery) } : {};
}

export function storageLocations(storage: Readonly<Record<string, StorageConfig>>): StorageLocation[] {
  return Object.entries(storage).map(([name, st]) => ({ name, urls: st.urls, egressPerGb: st.egressPerGb }));
}

export function buildSites(config: CoordinatorConfig): Map<string, SiteAdapter> {
  const out = new Map<string, SiteAdapter>();
  for (const [name, s] of Object.entries(config.sites))
    out.set(
      name,
      s.adapter === 'netns'
        ? new NetnsSite(name, s.netns!)
        : s.adapter === 'openstack'
          ? new OpenstackSite(name, s.openstack!)
          : s.adapter === 'ec2'
            ? new Ec2Site(name, s.ec2!)
            : new CommandSite(name, s.command!),
    );
  return out;
}

export function buildBatch(c: BatchSystemConfig): BatchSystem {
  return new SlurmBatch(c);
}

/**
 * A slurm-conf that cannot be read is a config error, found at start (exit 2), not a batch
 * system that looks unreachable for ever after. squeue's own complaint is quoted: it prints it
 * at once and then retries for a minute, so it is given two seconds.
 */
export async function checkSlurmConf(c: BatchSystemConfig): Promise<void> {
  checkBinDir(c);
  if (c.type !== 'slurm' || !c.slurmConf) return;
  try {
    accessSync(c.slurmConf, constants.R_OK);
    return;
  } catch (err) {
    let said: string;
    try {
      const r = await runProgram(c.binDir ? `${c.binDir}/squeue` : 'squeue', ['--json'], { env: { ...process.env, SLURM_CONF: c.slurmConf }, timeoutMs: 2000 });
      said = r.code === 0 ? '' : complaint(r);
    } catch (e) {
      said = /\(it said: (.*)\)$/.exec((e as Error).message)?.[1] ?? '';
    }
    throw coordinatorErrors.badConfig('batch-system.slurm-conf', `cannot read ${c.slurmConf}: ${said || (err as Error).message}`);
  }
}

/** A bin-dir without an executable squeue would leave the batch system unreadable for ever. */
function checkBinDir(c: BatchSystemConfig): void {
  if (c.type !== 'slurm' || !c.binDir) return;
  try {
    accessSync(`${c.binDir}/squeue`, constants.X_OK);
  } catch (err) {
    throw coordinatorErrors.badConfig('batch-system.bin-dir', `no squeue to run in ${c.binDir} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); give the directory of squeue, sinfo and scontrol, or leave it out to use PATH`);
  }
}

export interface Running extends Service {
  readonly coordinator: Coordinator;
  readonly port: number;
}

export async function startCoordinator(
  settings: Settings,
  log: Logger,
  deps: { clock?: Clock; batch?: BatchSystem; sites?: Map<string, SiteAdapter>; data?: DataSource } = {},
): Promise<Running> {
  const { config } = settings;
  const clock = deps.clock ?? systemClock;
  if (!deps.batch) await checkSlurmConf(settings.batchSystem);
  if (!deps.sites && Object.values(config.sites).some((s) => s.adapter === 'ec2')) await loadEc2Sdk();
  const registry = DroneRegistry.open(config.stateDir);
  // Drones at a site the config dropped could be neither watched nor stopped: refuse to start.
  for (const d of registry.all()) {
    if (d.state === 'down') continue;
    const site = config.sites[d.site];
    if (!site || !site.machineTypes.includes(d.machineType)) {
      const ids = registry.all().filter((x) => x.site === d.site && x.state !== 'down').map((x) => x.id);
      registry.close();
      throw coordinatorErrors.orphanedDrones(d.site, ids);
    }
  }
  const coresOf = (t: string) => config.machineTypes[t]?.cores ?? 0;
  const holder: { coordinator?: Coordinator } = {};
  const view = (includeDown = false) =>
    buildStatus(registry.all(), settings.siteSettings, coresOf, holder.coordinator?.last, clock.now(), includeDown, registry.writeError);
  const metrics = createMetrics(() => view());
  const coordinator = new Coordinator({
    registry,
    batch: deps.batch ?? buildBatch(settings.batchSystem),
    sites: deps.sites ?? buildSites(config),
    siteSettings: settings.siteSettings,
    machineTypes: config.machineTypes,
    ...policyFor(config.controller),
    // Only estuary's policy weighs run times; `history: off` leaves time limits and `runtime`.
    ...(config.controller.type === 'estuary' && settings.batchSystem.history !== 'off' ? { history: { everyMs: settings.batchSystem.historyEvery } } : {}),
    storage: storageLocations(config.storage),
    ...(deps.data ? { data: deps.data } : dataSource(settings)),
    intervalMs: config.interval,
    clock,
    log,
    prefix: config.prefix,
    onTransition: (d) => metrics.transitions.inc({ site: d.site, to: d.state }),
  });
  holder.coordinator = coordinator;
  const http = buildHttp({ view, timeline: () => coordinator.timeline, registry, metrics: metrics.registry });
  try {
    await http.listen({ host: config.listen.host, port: config.listen.port });
  } catch (err) {
    registry.close();
    throw coordinatorErrors.listen(`${config.listen.host}:${config.listen.port}`, (err as NodeJS.ErrnoException).code ?? String(err));
  }
  const address = http.server.address();
  const port = typeof address === 'object' && address ? address.port : config.listen.port;
  log.info({ port, stateDir: config.stateDir, sites: settings.siteSettings.map((s) => s.name) }, 'coordinator listening');
  // Each site's orphan sweep runs in that site's queue; the loop starts at once beside them.
  void coordinator.reconcile();
  const stopLoop = new AbortController();
  const loop = coordinator.run(stopLoop.signal);
  return {
    coordinator,
    port,
    async stop(deadline: AbortSignal) {
      stopLoop.abort();
      // The interval in progress and the site calls in flight finish if they can before the
      // deadline; past it, the programs they wait for are killed (their state is persisted).
      const timeUp = new Promise<void>((resolve) => (deadline.aborted ? resolve() : deadline.addEventListener('abort', () => resolve(), { once: true })));
      const done = await Promise.race([loop.then(() => coordinator.settle()).then(() => true), timeUp.then(() => false)]);
      if (!done) log.warn({ killed: killRunningPrograms() }, 'stop deadline reached: ended the batch-system and site programs still running');
      await http.close();
      registry.close();
    },
  };
}
