// The coordinator's Prometheus metrics, names in one place. Gauges are read from the status view
// when scraped, so they cannot disagree with the API and the page.

import { Counter, Gauge, Registry } from 'prom-client';
import { DRONE_STATES } from './model.ts';
import type { StatusView } from './status/view.ts';

export const COORDINATOR_METRICS = {
  /** gauge {site, state}: drones by state. */
  drones: 'estuary_coordinator_drones',
  /** gauge {site}: the site's quota in drones. */
  quota: 'estuary_coordinator_site_quota',
  /** gauge {site}: cost so far of every drone the registry holds, in the config's currency. */
  cost: 'estuary_coordinator_site_cost',
  /** gauge {pool}: demand in cores set by the controller. */
  demand: 'estuary_coordinator_pool_demand_cores',
  /** gauge {pool}: supply in cores (available drones). */
  supply: 'estuary_coordinator_pool_supply_cores',
  /** gauge: pending jobs the batch system reported. */
  pending: 'estuary_coordinator_pending_jobs',
  /** counter {site, to}: drone transitions. */
  transitions: 'estuary_coordinator_transitions_total',
  /** gauge: 1 while the batch system answers. */
  batchUp: 'estuary_coordinator_batch_system_up',
  /** gauge {error}: 1 with the batch system's own words while it cannot be read. */
  batchError: 'estuary_coordinator_batch_system_error',
  /** gauge {error}: 1 while the drone registry can be written; 0 with SQLite's error when not. */
  registryWritable: 'estuary_coordinator_registry_writable',
  /** gauge {source, error}: 1 while finished jobs can be read for run times; 0 with why not. */
  historyUp: 'estuary_coordinator_run_time_history_up',
  /** gauge: finished jobs the run times are learned from. */
  historyJobs: 'estuary_coordinator_run_time_history_jobs',
  /** gauge: seconds back the finished jobs read reach (a week once whole). */
  historyCovered: 'estuary_coordinator_run_time_history_covered_seconds',
  /** gauge {site, problem}: 1 when the site is healthy; 0 with why it is not. */
  siteHealthy: 'estuary_coordinator_site_healthy',
} as const;

export interface CoordinatorMetrics {
  readonly registry: Registry;
  readonly transitions: Counter<'site' | 'to'>;
}

export function createMetrics(view: () => StatusView): CoordinatorMetrics {
  const registry = new Registry();
  const gauge = (name: string, help: string, labelNames: string[], set: (g: Gauge<string>, v: StatusView) => void) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        this.reset();
        set(this, view());
      },
    });
  gauge(COORDINATOR_METRICS.drones, 'Drones by site and state.', ['site', 'state'], (g, v) => {
    for (const s of v.sites)
      for (const state of DRONE_STATES.filter((x) => x !== 'down'))
        g.set({ site: s.name, state }, v.drones.filter((d) => d.site === s.name && d.state === state).length);
  });
  gauge(COORDINATOR_METRICS.quota, 'Most drones a site may run.', ['site'], (g, v) => {
    for (const s of v.sites) g.set({ site: s.name }, s.quota);
  });
  gauge(COORDINATOR_METRICS.cost, 'Cost so far of the drones in the registry.', ['site'], (g, v) => {
    for (const s of v.sites) g.set({ site: s.name }, s.cost);
  });
  gauge(COORDINATOR_METRICS.demand, 'Demand in cores after the standardiser.', ['pool'], (g, v) => {
    for (const p of v.pools) g.set({ pool: p.pool }, p.demand);
  });
  gauge(COORDINATOR_METRICS.supply, 'Cores of available drones.', ['pool'], (g, v) => {
    for (const p of v.pools) g.set({ pool: p.pool }, p.supply);
  });
  gauge(COORDINATOR_METRICS.pending, 'Pending jobs in the served partitions.', [], (g, v) => g.set(v.pendingJobs));
  gauge(COORDINATOR_METRICS.batchUp, '1 while the batch system answers.', [], (g, v) => g.set(v.batchHealthy ? 1 : 0));
  gauge(COORDINATOR_METRICS.batchError, 'The batch system\'s error while it cannot be read.', ['error'], (g, v) => {
    if (v.batch === 'unreachable') g.set({ error: (v.batchError ?? 'no answer').slice(0, 200) }, 1);
  });
  gauge(COORDINATOR_METRICS.registryWritable, '1 while the drone registry can be written; 0 with the error.', ['error'], (g, v) =>
    g.set({ error: (v.registryError ?? '').slice(0, 200) }, v.registryError ? 0 : 1),
  );
  gauge(COORDINATOR_METRICS.siteHealthy, '1 when the site is healthy; 0 with the problem.', ['site', 'problem'], (g, v) => {
    for (const s of v.sites) g.set({ site: s.name, problem: s.healthy ? '' : (s.problem ?? '').slice(0, 200) }, s.healthy ? 1 : 0);
  });
  gauge(COORDINATOR_METRICS.historyUp, '1 while finished jobs can be read for run times; 0 with why not.', ['source', 'error'], (g, v) => {
    if (v.history) g.set({ source: v.history.source ?? '', error: stableLabel(v.history.error ?? '') }, v.history.error ? 0 : 1);
  });
  gauge(COORDINATOR_METRICS.historyJobs, 'Finished jobs the run times are learned from.', [], (g, v) => {
    if (v.history) g.set(v.history.jobs);
  });
  gauge(COORDINATOR_METRICS.historyCovered, 'How far back the reads of finished jobs that answered reach (604800, a week, once whole; less while narrowed reads make it up).', [], (g, v) => {
    if (v.history) g.set(v.history.coveredS);
  });
  const transitions = new Counter({
    name: COORDINATOR_METRICS.transitions,
    help: 'Drone state transitions.',
    labelNames: ['site', 'to'],
    registers: [registry],
  });
  return { registry, transitions };
}

/**
 * An error as a label that stays one series while the failure is the same: cut to 200
 * characters, and runs of four or more digits (times, ids, byte counts a program may put in its
 * complaint) written as `N`. The whole words are on the page, in the API and in the log.
 */
export function stableLabel(error: string): string {
  return error.replace(/\d{4,}/g, 'N').slice(0, 200);
}
