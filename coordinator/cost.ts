// The expected-cost arithmetic of estuary's policy: prices by market, spot rework, where an input
// lives and what moving it costs in dollars and time, and what a new drone is budgeted at. Pure,
// and shared by the policy, the budget check every controller goes through, and the status view.

import { COST_DEFAULTS } from './config.ts';
import type { Drone, Link, Market, SiteCost, SiteView, StorageLocation } from './model.ts';
import { prefixDepth, withinPrefix } from './url-scope.ts';

export const HOUR_MS = 3_600_000;
export const GB = 1e9;

/** The cost model of a site whose config stated none: the documented defaults. */
export const DEFAULT_COST: SiteCost = {
  spotInterruptionRate: COST_DEFAULTS.spotInterruptionRate,
  egressPerGb: COST_DEFAULTS.egressPerGb,
  link: { egressPerGb: COST_DEFAULTS.egressPerGb, bandwidthBps: COST_DEFAULTS.bandwidth, rttMs: COST_DEFAULTS.rtt },
  links: {},
  bootLatencyMs: COST_DEFAULTS.bootLatency,
};

/** What prices depend on: the on-demand price and the rest of the cost model. */
export type Priced = Pick<SiteView, 'costPerCoreHour' | 'cost'>;

export const costOf = (site: Priced): SiteCost => site.cost ?? DEFAULT_COST;

/** Dollars per core-hour on a market; undefined where the site does not sell that market. */
export function pricePerCoreHour(site: Priced, market: Market | undefined): number | undefined {
  return market === 'spot' ? costOf(site).spotPerCoreHour : site.costPerCoreHour;
}

/** What a drone costs per core-hour: its market's price (spot drones at the spot price). */
export function dronePrice(site: Priced | undefined, drone: Pick<Drone, 'market' | 'pricePerCoreHour'>): number {
  // The price in force when it started: changing the config does not re-price the past.
  if (drone.pricePerCoreHour !== undefined) return drone.pricePerCoreHour;
  if (!site) return 0;
  return pricePerCoreHour(site, drone.market) ?? site.costPerCoreHour;
}

/**
 * Expected run time on a market. A spot reclaim arrives at `rate` per hour and, at a uniformly
 * random moment of a run of h hours, loses h/2 of work on average: the run grows by rate·h·h/2.
 * (A first-order estimate; it stays below a tenth for rate·h < 0.2, the only range where spot
 * can win anyway.)
 */
export function expectedRunMs(runMs: number, market: Market | undefined, rate: number): number {
  if (market !== 'spot') return runMs;
  const h = runMs / HOUR_MS;
  return runMs * (1 + (rate * h) / 2);
}

/**
 * The storage location an input lives in: the deepest URL prefix it lies under, matched segment
 * by segment (url-scope.ts: no `…/data` for `…/data-private`, no dot segments).
 */
export function locationOf(url: string, storage: readonly StorageLocation[] | undefined): StorageLocation | undefined {
  let best: StorageLocation | undefined;
  let bestDepth = -1;
  for (const loc of storage ?? [])
    for (const prefix of loc.urls)
      if (withinPrefix(url, prefix) && prefixDepth(prefix) > bestDepth) {
        best = loc;
        bestDepth = prefixDepth(prefix);
      }
  return best;
}

/** How the site reaches the input's location; inputs of no known location cost no egress. */
export function linkTo(site: SiteView, url: string, storage: readonly StorageLocation[] | undefined): Link {
  const cost = costOf(site);
  const loc = locationOf(url, storage);
  if (!loc) return { ...cost.link, egressPerGb: 0 };
  return cost.links[loc.name] ?? { ...cost.link, egressPerGb: loc.egressPerGb };
}

/** Milliseconds to move `bytes` over the link: one round trip to start, then the bandwidth. */
export function transferMs(bytes: number, link: Link): number {
  if (bytes <= 0) return 0;
  return link.rttMs + ((bytes * 8) / link.bandwidthBps) * 1000;
}

export const dollars = (bytes: number, perGb: number): number => (bytes / GB) * perGb;

/**
 * What a new drone is budgeted at before it starts: its cores at its price for its boot and one
 * run. The policy reserves this and the budget check refuses a start past the budget with it,
 * so both agree on what "would take a site past its budget" means.
 */
export function droneBudget(site: SiteView, cores: number, market: Market | undefined, runMs: number): number {
  const price = pricePerCoreHour(site, market) ?? site.costPerCoreHour;
  return (cores * price * (costOf(site).bootLatencyMs + runMs)) / HOUR_MS;
}

/** Dollars left today under the site's budget (Infinity without one). */
export function budgetLeft(site: SiteView): number {
  const budget = costOf(site).budgetPerDay;
  return budget === undefined ? Infinity : budget - (site.spentToday ?? 0);
}

/** Start of the UTC day of `now`: budgets are per UTC day. */
export const dayStart = (now: number): number => now - (now % (24 * HOUR_MS));

/** Dollars a drone has cost between `from` and `now` (its life clipped to that window). */
export function costSince(d: Drone, cores: number, pricePerCoreHourValue: number, from: number, now: number): number {
  const end = d.state === 'down' ? d.stateSince : now;
  const start = Math.max(d.createdAt, from);
  return end > start ? (cores * pricePerCoreHourValue * (end - start)) / HOUR_MS : 0;
}

/** Dollars a site's drones have cost since 00:00 UTC of `now`, each at its market's price. */
export function spentToday(drones: readonly Drone[], site: Priced & { readonly name: string }, coresOf: (machineType: string) => number, now: number): number {
  const from = dayStart(now);
  return drones.filter((d) => d.site === site.name).reduce((sum, d) => sum + costSince(d, coresOf(d.machineType), dronePrice(site, d), from, now), 0);
}

/**
 * What the budget check counts as today's: each drone's cost so far, but a live drone at least
 * at what it was budgeted when started — held until it ends, so the next interval cannot start
 * a drone the budget just refused. An ended drone counts what it cost.
 */
export function committedToday(drones: readonly Drone[], site: Priced & { readonly name: string }, coresOf: (machineType: string) => number, now: number): number {
  const from = dayStart(now);
  return drones
    .filter((d) => d.site === site.name)
    .reduce((sum, d) => {
      const spent = costSince(d, coresOf(d.machineType), dronePrice(site, d), from, now);
      const held = d.state !== 'down' && d.budget !== undefined && d.createdAt >= from ? d.budget : 0;
      return sum + Math.max(spent, held);
    }, 0);
}

/** Rounded for reasons: cents as numbers, GB to one decimal. */
export const cents = (x: number): number => Math.round(x * 100) / 100;
export const gb = (bytes: number): number => Math.round((bytes / GB) * 10) / 10;

/** Bytes for a sentence: "40 GB", "2.5 MB", "0 B" (decimal units, as clouds bill). */
export function bytesText(n: number): string {
  for (const [unit, size] of [['TB', 1e12], ['GB', 1e9], ['MB', 1e6], ['kB', 1e3]] as const)
    if (n >= size) return `${Math.round((n / size) * 10) / 10} ${unit}`;
  return `${Math.round(n)} B`;
}

/** Dollars for a sentence: cents, or two significant digits below a cent (egress of a few MB). */
export const money = (x: number): string => (x === 0 || x >= 0.01 ? x.toFixed(2) : x.toPrecision(2));

/** A run time for a sentence: seconds under two minutes, else minutes, else hours. */
export const durationText = (ms: number): string =>
  ms < 120_000 ? `${Math.round(ms / 1000)} s` : ms < 7_200_000 ? `${Math.round(ms / 60_000)} min` : `${(ms / 3_600_000).toFixed(1)} h`;
