// What `status`, /api/v1, the page and /metrics show: every site and drone with its state, age,
// cost so far and the reason of the last decision about it. Built from the registry and the
// last interval's report; pure apart from reading them.

import type { TickReport } from '../coordinator.ts';
import type { HistoryStatus } from '../run-history.ts';
import { dronePrice, spentToday } from '../cost.ts';
import type { Drone, Reason, SiteCost } from '../model.ts';
import { terminalSafe } from '../../lib/terminal-text.ts';

export const API_VERSION = 1;

export interface DroneStatus {
  readonly id: string;
  readonly site: string;
  readonly machineType: string;
  readonly market: string;
  readonly state: string;
  readonly ageS: number;
  readonly inStateS: number;
  readonly idleS: number;
  readonly cost: number;
  readonly reason: Reason;
  /** Why it was started (null for drones started before this was kept). */
  readonly startReason: Reason | null;
}

export interface SiteStatus {
  readonly name: string;
  readonly quota: number;
  readonly drones: number;
  readonly healthy: boolean;
  /** Why the site is unhealthy (a failing operation, failed instances in a row), else null. */
  readonly problem: string | null;
  readonly cost: number;
  readonly costPerCoreHour: number;
  readonly spotPerCoreHour: number | null;
  /** Dollars since 00:00 UTC, and the daily budget (null: none). */
  readonly spentToday: number;
  readonly budgetPerDay: number | null;
}

export interface StatusView {
  readonly version: number;
  readonly at: number;
  readonly batchHealthy: boolean;
  /** `reachable` only once the batch system has answered; `unreachable` with its own error. */
  readonly batch: 'not yet read' | 'reachable' | 'unreachable';
  readonly batchError: string | null;
  /** Why the drone registry cannot be written (a full disk): nothing is started or stopped. */
  readonly registryError: string | null;
  readonly pendingJobs: number;
  /** Pending jobs no pool can run (a feature no drone has, too many cores or too much memory). */
  readonly unplaceable: TickReport['unplaceable'];
  readonly unplaceableCount: number;
  /** Set-up problems the loop sees but cannot mend (a hold no node declares). */
  readonly warnings: readonly string[];
  readonly sites: readonly SiteStatus[];
  readonly pools: TickReport['pools'];
  /** Inputs each site's cache was last asked to fetch ahead of the drones. */
  readonly prewarmed: TickReport['prewarmed'];
  readonly drones: readonly DroneStatus[];
  /** Run times learned from finished jobs; null where the policy does not learn them. */
  readonly history: HistoryStatus | null;
}

export interface SiteInfo {
  readonly name: string;
  readonly quota: number;
  readonly costPerCoreHour: number;
  readonly cost?: SiteCost;
}

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;
const priceOf = (site: SiteInfo | undefined, d: Drone) => dronePrice(site, d);

/** Cost so far: cores × price × hours from request until down (or now). */
export function droneCost(d: Drone, cores: number, pricePerCoreHour: number, now: number): number {
  const end = d.state === 'down' ? d.stateSince : now;
  return Math.round(((cores * pricePerCoreHour * Math.max(0, end - d.createdAt)) / 3_600_000) * 10_000) / 10_000;
}

export function buildStatus(
  drones: readonly Drone[],
  sites: readonly SiteInfo[],
  coresOf: (machineType: string) => number,
  last: TickReport | undefined,
  now: number,
  includeDown = false,
  registryError: string | null = null,
): StatusView {
  const byName = new Map(sites.map((s) => [s.name, s]));
  const rows = drones
    .filter((d) => includeDown || d.state !== 'down')
    .map((d) => ({
      id: d.id,
      site: d.site,
      machineType: d.machineType,
      market: d.market ?? 'on-demand',
      state: d.state,
      ageS: Math.round((now - d.createdAt) / 1000),
      inStateS: Math.round((now - d.stateSince) / 1000),
      idleS: d.state === 'available' ? Math.round((now - d.lastBusyAt) / 1000) : 0,
      cost: droneCost(d, coresOf(d.machineType), priceOf(byName.get(d.site), d), now),
      reason: d.reason,
      startReason: d.startReason ?? null,
    }));
  const unhealthy = new Set(last?.unhealthySites ?? []);
  return {
    version: API_VERSION,
    at: now,
    batchHealthy: last?.batchHealthy ?? false,
    batch: batchState(last),
    batchError: last?.batchError ?? null,
    registryError,
    pendingJobs: last?.pending ?? 0,
    unplaceable: last?.unplaceable ?? [],
    unplaceableCount: last?.unplaceableCount ?? 0,
    warnings: last?.warnings ?? [],
    sites: sites.map((s) => ({
      name: s.name,
      quota: s.quota,
      drones: drones.filter((d) => d.site === s.name && d.state !== 'down').length,
      healthy: !unhealthy.has(s.name),
      problem: last?.siteProblems?.[s.name] ?? null,
      costPerCoreHour: s.costPerCoreHour,
      spotPerCoreHour: s.cost?.spotPerCoreHour ?? null,
      cost: round4(drones.filter((d) => d.site === s.name).reduce((sum, d) => sum + droneCost(d, coresOf(d.machineType), priceOf(s, d), now), 0)),
      spentToday: round4(spentToday(drones, s, coresOf, now)),
      budgetPerDay: s.cost?.budgetPerDay ?? null,
    })),
    pools: last?.pools ?? [],
    prewarmed: last?.prewarmed ?? {},
    drones: rows,
    history: last?.history ?? null,
  };
}

function batchState(last: TickReport | undefined): StatusView['batch'] {
  if (last?.batchHealthy) return 'reachable';
  return last?.batchEverRead || last?.batchError ? 'unreachable' : 'not yet read';
}

/** Where run times come from, in one line: learned, or why not and what is used instead. */
export function historyText(h: HistoryStatus): string {
  const learned = `learned from ${h.jobs} finished job${h.jobs === 1 ? '' : 's'}${h.source ? ` (${h.source})` : ''}`;
  const skipped = h.skipped ? `, ${h.skipped} unreadable record${h.skipped === 1 ? '' : 's'} skipped` : '';
  const narrowed = narrowedText(h);
  if (!h.error) return h.source ? `${learned}${skipped}${narrowed}` : 'not read yet';
  return h.jobs ? `${learned}; the last read FAILED: ${h.error}${narrowed}` : `NOT LEARNED: ${h.error}; time limits and the configured runtime are used${narrowed}`;
}

/** While reads are narrowed after one timed out or answered too much: how far they ask, and how much of the week is read. */
function narrowedText(h: HistoryStatus): string {
  if (h.narrowedS === null) return '';
  const read = h.coveredS ? `, ${spanText(h.coveredS)} of 7 days read so far` : '';
  return `; a read of finished jobs timed out or answered too much: asking ${spanText(h.narrowedS)} at a time${read}`;
}

function spanText(s: number): string {
  return s >= 86_400 ? `${Number((s / 86_400).toFixed(1))} days` : `${Number((s / 3600).toFixed(1))} h`;
}

/** A reason as one line of text: its sentence if it has one, the rule, then its numbers. */
export function reasonText(r: Reason): string {
  const { rule, why, ...rest } = r;
  const fields = Object.entries(rest)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${v}`);
  const numbers = fields.length ? `${rule} (${fields.join(', ')})` : rule;
  // Reasons quote job comments (declared inputs) that any batch user writes: no control
  // characters reach the admin's terminal.
  return terminalSafe(why === undefined ? numbers : `${String(why)} [${numbers}]`);
}

/** The terminal table `estuary coordinator status` prints. */
export function statusTable(v: StatusView): string {
  const lines = [
    `batch system: ${v.batch === 'unreachable' ? `UNREACHABLE (${v.batchError ?? 'no answer'})` : v.batch}   pending jobs: ${v.pendingJobs}`,
    ...(v.history ? [`run times: ${historyText(v.history)}`] : []),
    ...(v.registryError ? [`REGISTRY CANNOT BE WRITTEN: ${v.registryError}; nothing is started or stopped until it can`] : []),
    '',
    'SITE            DRONES/QUOTA  HEALTHY  COST',
    ...v.sites.map(
      (s) =>
        `${s.name.padEnd(15)} ${`${s.drones}/${s.quota}`.padEnd(13)} ${(s.healthy ? 'yes' : 'NO').padEnd(8)} $${s.cost.toFixed(4)}${s.problem ? `  ${s.problem}` : ''}`,
    ),
    '',
    'POOL                  SUPPLY  DEMAND  PENDING  DECISION',
    ...v.pools.map(
      (p) => `${p.pool.padEnd(21)} ${String(p.supply).padEnd(7)} ${String(Math.round(p.demand * 100) / 100).padEnd(7)} ${String(p.pendingJobs).padEnd(8)} ${reasonText(p.reason)}`,
    ),
    '',
    'DRONE                 SITE        STATE        AGE     COST      LAST DECISION',
    ...v.drones.map(
      (d) =>
        `${d.id.padEnd(21)} ${d.site.padEnd(11)} ${d.state.padEnd(12)} ${`${d.ageS}s`.padEnd(7)} $${d.cost.toFixed(4).padEnd(8)} ${reasonText(d.reason)}`,
    ),
  ];
  if (v.drones.length === 0) lines.push('(no drones)');
  if (v.unplaceableCount > 0)
    lines.push('', `PENDING JOBS NO POOL CAN RUN (${v.unplaceableCount})`, ...v.unplaceable.map((u) => `${u.job.padEnd(21)} ${u.why}`));
  // Site problems, batch errors and the unplaceable jobs' reasons quote site scripts, the batch
  // system and job comments: no control character of theirs reaches the admin's terminal.
  return `${lines.map(terminalSafe).join('\n')}\n`;
}
