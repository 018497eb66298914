// estuary's policy: where the waiting work runs, on how many drones, bought on which market. It
// places the pending jobs one by one, oldest first, each where it adds the least expected cost
// while still finishing within the turnaround:
//
//   compute  = cores × price × run time (spot: plus the expected rework of a reclaim, cost.ts)
//   + boot   = a new drone's cores × price × boot latency, charged to the job that opens it
//   + inputs = bytes of its declared inputs not cached at the site × egress price of their
//              storage location (charged once per site: the site's cache fetches them once)
//   + output = its declared output bytes × the site's egress price (results go home)
//   + WAN    = the same input bytes × `wan-per-gb`, even where egress is free: a link is shared
//              and a site's WAN is its scarcest resource, so bytes that need not move do not
//
// The home cluster is one more place (when the batch system reports its cores): free, no boot,
// its idle cores now and its busy ones expected free like a drone's, and its inputs priced the
// same way, so a job whose data is at home waits for home and one whose data is elsewhere goes
// where the data is. A job placed at a drone whose inputs are not at home is steered off the
// home nodes (steer.ts), so a freed home slot does not pull its data across the WAN.
//
// and the time: a job starts when its slot is free and its inputs have crossed the site's link
// (pre-warming starts that transfer now, during the boot), and runs as long as finished jobs of
// its user, partition and name ran (run-times.ts), else its time limit, else `runtime`.
// A slot is a core of an idle or booting drone, or of a drone this plan opens (within the quota
// and the daily budget). A job that can finish within the turnaround takes the cheapest way that
// does; one that cannot anywhere takes the earliest finish. So a short turnaround opens many
// drones, a long one few; work of unknown length needs a slot each and bursts as wide as quotas
// allow, like queue-pressure placement.
//
// Two rules then let drones go: an idle drone no placed job uses goes once it has idled as long
// as a new one boots (idle-release.ts), and a spot pool whose next jobs are the tail of the work,
// likely to be reclaimed, takes no new job and drains while the tail is placed on demand
// (spot-tail.ts) — all but the tail jobs on demand cannot take, which stay on spot.
// Pure: the snapshot is all it reads.

import type { EstuaryConfig } from './config.ts';
import { budgetLeft, bytesText, cents, costOf, dollars, droneBudget, durationText, expectedRunMs, HOUR_MS, money, pricePerCoreHour } from './cost.ts';
import { type Evaluation, busyFor, dataAt, heldAtHome, HOME, homeState, type PoolState, poolState, type SiteState } from './estuary-state.ts';
import { type IdleRelease, idleReleasesEarly } from './idle-release.ts';
import type { PendingJob, PoolView, Reason, SiteView, Snapshot } from './model.ts';
import { fits } from './placement.ts';
import { estimateRunTime, estimateText, type RunEstimate } from './run-times.ts';
import { type SpotTail, spotTail } from './spot-tail.ts';
import { busyCores } from './busy-cores.ts';
import { HOME_POOL } from './steer.ts';

export interface PoolPlan {
  readonly jobs: readonly PendingJob[];
  /** Drones this plan opens in the pool, beyond the live ones. */
  readonly newDrones: number;
  /** The largest budget one of those drones was reserved at (cost.ts droneBudget). */
  readonly droneBudget: number;
  /** Inputs of the placed jobs the site does not hold in full: its cache should fetch them now. */
  readonly prewarm: readonly string[];
  /** Placed jobs whose inputs the home cluster does not hold: kept off the home nodes. */
  readonly awayFromHome?: readonly string[];
  /** Idle drones no placed job uses, idle as long as a new one boots: released now (idle-release.ts). */
  readonly release?: readonly IdleRelease[];
  /** Spot drones to drain, busy or not: the tail of the work goes on demand (spot-tail.ts). */
  readonly drain?: number;
  readonly reason: Reason;
}

export type Plan = ReadonlyMap<string, PoolPlan>;

export function estuaryPlan(snapshot: Snapshot, c: EstuaryConfig): Plan {
  // A spot pool still draining for the tail stays closed until those drones are gone: its quota
  // is not free yet, and a plan that reopened it would buy spot for the tail in what room is left.
  const draining = new Set(snapshot.pools.filter((p) => p.market === 'spot' && p.drones.some((d) => d.drone.state === 'draining' && d.drone.reason.tailJobs !== undefined)).map((p) => p.key));
  const first = place(snapshot, c, draining, false);
  // The spot pools whose tail is next (spot-tail.ts), timed by when busy cores truly free (their
  // jobs' starts): placed again without them. Placement itself keeps the cautious guess for busy
  // cores (busyFor): knowing they free sooner, the plan waits for them rather than open drones,
  // and the work ends later (kek-figure8: 6,789 s against 6,363 s).
  const spot = first.pools.some((p) => p.pool.market === 'spot' && !draining.has(p.pool.key));
  const timed = spot && snapshot.running?.length ? place(snapshot, c, draining, true) : first;
  const end = Math.max(0, ...timed.pools.map((p) => p.finish));
  const tails = new Map<string, SpotTail | undefined>([...draining].map((k) => [k, undefined]));
  for (const p of timed.pools) {
    if (p.pool.market !== 'spot' || draining.has(p.pool.key)) continue;
    const cost = costOf(timed.sites.get(p.pool.site)!.site);
    const tail = spotTail(p.runs, timed.waiting, end, c.turnaround, cost.bootLatencyMs, cost.spotInterruptionRate, p.pool.cores);
    if (tail) tails.set(p.pool.key, tail);
  }
  // The tail pools close only for the jobs on demand takes: a job no open pool places, and none
  // would once the tail pools' drones are gone (over budget, no on-demand room, none that fits),
  // stays on spot. A reclaim delays it a boot and half a run; not running, forever.
  const closing = new Set([...tails.keys()].filter((k) => !draining.has(k)));
  const { pools, sites } = closing.size ? place(snapshot, c, new Set(tails.keys()), false, closing) : first;
  const timedJobs = new Map(timed.pools.map((p) => [p.pool.key, p.jobs]));
  const placedAt = new Map(pools.flatMap((p) => p.jobs.map((j) => [j.id, p.pool.key] as const)));
  // Kept, and some of the jobs the timed plan gave the pool now run elsewhere (on demand).
  const moved = (p: PoolState) => p.jobs.length > 0 && (timedJobs.get(p.pool.key) ?? []).some((j) => (placedAt.get(j.id) ?? p.pool.key) !== p.pool.key);
  const closedFor = (p: PoolState): TailClose | undefined => (tails.has(p.pool.key) ? { tail: tails.get(p.pool.key), kept: p.jobs.length > 0, moved: moved(p) } : undefined);
  return new Map(pools.map((p) => [p.pool.key, finishPlan(p, snapshot, sites.get(p.pool.site)!.site, c, closedFor(p))]));
}

/**
 * Places every pending job, oldest first, on no pool of `closed`; busy cores timed by their jobs'
 * starts when `timed`. A pool of `lastResort` (closed too) takes a job only when no open pool
 * can, now or once the last-resort pools' drones are gone (their quota freed).
 */
function place(
  snapshot: Snapshot,
  c: EstuaryConfig,
  closed: ReadonlySet<string>,
  timed: boolean,
  lastResort: ReadonlySet<string> = new Set(),
): { pools: PoolState[]; sites: Map<string, SiteState>; waiting: { runMs: number; cpus: number }[] } {
  const waiting: { runMs: number; cpus: number }[] = [];
  const sites = new Map<string, SiteState>();
  // Per site, the drones of the last-resort pools: room an open pool gets once they drain.
  const freeing = new Map<string, number>();
  for (const p of snapshot.pools) if (lastResort.has(p.key)) freeing.set(p.site, (freeing.get(p.site) ?? 0) + p.drones.filter((d) => d.drone.state !== 'down').length);
  for (const site of snapshot.sites) {
    const live = snapshot.pools.filter((p) => p.site === site.name).reduce((n, p) => n + p.drones.filter((d) => d.drone.state !== 'down').length, 0);
    sites.set(site.name, { site, room: site.healthy ? Math.max(0, site.quota - live) : 0, budget: budgetLeft(site), ready: new Map(), linkBusy: new Map() });
  }
  const busy = { unknownMs: busyFor(snapshot, c), known: timed ? busyCores(snapshot.running, snapshot.now, snapshot.runTimes, c.runtime) : new Map<string, number[]>() };
  const pools = snapshot.pools.filter((p) => sites.has(p.site) && pricePerCoreHour(sites.get(p.site)!.site, p.market) !== undefined).map((pool) => poolState(pool, snapshot, sites.get(pool.site)!.site, busy));
  const home = homeState(snapshot, busy);
  if (home) {
    sites.set(HOME, home.site);
    pools.unshift(home.pool);
  }

  for (const job of [...snapshot.pending].sort((a, b) => a.submittedAt - b.submittedAt || a.id.localeCompare(b.id))) {
    const estimate = estimateRunTime(job, snapshot.runTimes, c.runtime);
    const runMs = estimate.ms;
    let evals = pools.filter((p) => !closed.has(p.pool.key) && fits(job, p.pool)).flatMap((p) => evaluate(job, runMs, p, sites.get(p.pool.site)!, snapshot, c));
    let best = choose(evals, c.turnaround, runMs);
    if (!best && lastResort.size && !opensOnceFreed(job, runMs, pools, sites, closed, freeing)) {
      evals = [...evals, ...pools.filter((p) => lastResort.has(p.pool.key) && fits(job, p.pool)).flatMap((p) => evaluate(job, runMs, p, sites.get(p.pool.site)!, snapshot, c))];
      best = choose(evals, c.turnaround, runMs);
    }
    if (!best) {
      for (const e of evals) e.pool.unplaced.set(e.refused!, (e.pool.unplaced.get(e.refused!) ?? 0) + 1);
      waiting.push({ runMs, cpus: job.cpus });
    }
    if (best) commit(job, estimate, best, sites.get(best.pool.pool.site)!, evals, c.turnaround);
    if (best && home && best.pool !== home.pool && !heldAtHome(job, snapshot)) best.pool.away.push(job.id);
  }

  return { pools, sites, waiting };
}

/** An open pool would open a drone for the job once the closing pools' drones at its site are gone. */
function opensOnceFreed(job: PendingJob, runMs: number, pools: readonly PoolState[], sites: ReadonlyMap<string, SiteState>, closed: ReadonlySet<string>, freeing: ReadonlyMap<string, number>): boolean {
  return pools.some((p) => {
    const s = sites.get(p.pool.site)!;
    if (closed.has(p.pool.key) || !s.site.healthy || (freeing.get(p.pool.site) ?? 0) === 0) return false;
    return fits(job, p.pool) && job.cpus <= p.pool.cores && s.budget >= droneBudget(s.site, p.pool.cores, p.pool.market, runMs);
  });
}

function evaluate(job: PendingJob, runMs: number, p: PoolState, s: SiteState, snapshot: Snapshot, c: EstuaryConfig): Evaluation[] {
  const cost = costOf(s.site);
  const price = pricePerCoreHour(s.site, p.pool.market)!;
  const run = expectedRunMs(runMs, p.pool.market, cost.spotInterruptionRate);
  const data = dataAt(job, s, snapshot, c.wanPerGb);
  const compute = (job.cpus * price * run) / HOUR_MS;
  const output = dollars(job.outputBytes ?? 0, cost.egressPerGb);
  const base = compute + data.egress + data.wan + output;
  const options: Evaluation[] = [];
  const slot = p.slots.best(job.cpus);
  if (slot) options.push({ pool: p, idx: slot.idx, opens: false, finish: Math.max(slot.at, data.readyMs) + run, cost: base, compute, data, output });
  const reserve = droneBudget(s.site, p.pool.cores, p.pool.market, runMs);
  const affordable = s.budget >= reserve;
  // An unhealthy site (its API failing, backed off) opens nothing, but its drones whose nodes
  // have joined keep running jobs: the batch system, not the site's API, starts those.
  if (!s.site.healthy) return options.length ? options : [{ pool: p, refused: 'unhealthy' }];
  if (s.room > 0 && !affordable) p.budgetHeld = true;
  if (s.room > 0 && affordable && job.cpus <= p.pool.cores) {
    const boot = (p.pool.cores * price * cost.bootLatencyMs) / HOUR_MS;
    options.push({ pool: p, opens: true, finish: Math.max(cost.bootLatencyMs, data.readyMs) + run, cost: base + boot, compute: compute + boot, data, output });
  }
  if (options.length === 0) return [{ pool: p, refused: s.room > 0 && !affordable ? 'over budget' : 'full' }];
  return options;
}

/**
 * A job that cannot finish within the turnaround anywhere may still finish up to this share of
 * its run time after its earliest possible finish, if that is cheaper: spot's expected rework or
 * a slower link should not decide alone once the turnaround is lost anyway.
 */
const LATE_TOLERANCE = 0.1;

/** Of the ways to run a job: the cheapest that finishes by its deadline, the sooner on a tie. */
function choose(evals: readonly Evaluation[], turnaround: number, runMs: number): Evaluation | undefined {
  const open = evals.filter((e) => !e.refused);
  if (open.length === 0) return undefined;
  const soonest = Math.min(...open.map((e) => e.finish!));
  const deadline = Math.max(turnaround, soonest + LATE_TOLERANCE * runMs);
  return open
    .filter((e) => e.finish! <= deadline)
    .reduce((a, b) => (b.cost! < a.cost! || (b.cost === a.cost && b.finish! < a.finish!) ? b : a));
}

function commit(job: PendingJob, estimate: RunEstimate, e: Evaluation, s: SiteState, evals: readonly Evaluation[], turnaround: number): void {
  const p = e.pool;
  const runMs = estimate.ms;
  let idx = e.idx;
  if (e.opens) {
    const boot = costOf(s.site).bootLatencyMs;
    idx = p.slots.add(Array.from({ length: p.pool.cores }, () => boot));
    const reserve = droneBudget(s.site, p.pool.cores, p.pool.market, runMs);
    p.newDrones++;
    p.reserved = Math.max(p.reserved, reserve);
    s.room--;
    s.budget -= reserve;
  }
  p.slots.assign(idx!, job.cpus, e.finish!);
  p.used.add(idx!);
  const run = expectedRunMs(runMs, p.pool.market, costOf(s.site).spotInterruptionRate);
  p.runs.push({ start: e.finish! - run, finish: e.finish!, runMs, cpus: job.cpus });
  const data = e.data!;
  for (const f of data.fetch) {
    s.ready.set(f.url, f.at);
    s.linkBusy.set(f.link, Math.max(s.linkBusy.get(f.link) ?? 0, f.at));
    if (f.at > 0) p.prewarm.add(f.url);
  }
  p.jobs.push(job);
  p.first ??= { evals, turnaround, runMs, estimate };
  p.computeCost += e.compute!;
  p.inputCost += data.egress;
  p.wanCost += data.wan;
  p.wanBytes += data.wanBytes;
  p.outputCost += e.output!;
  p.finish = Math.max(p.finish, e.finish!);
}

const label = (p: PoolView) => (p.market === 'spot' ? `${p.site} spot` : p.site);

/** A tail pool: closed (it drains), or `kept` for the tail jobs on demand cannot take. */
interface TailClose {
  readonly tail: SpotTail | undefined;
  readonly kept: boolean;
  /** Kept, and some of its jobs went on demand. */
  readonly moved?: boolean;
}

function finishPlan(p: PoolState, snapshot: Snapshot, site: SiteView, c: EstuaryConfig, tailPool?: TailClose): PoolPlan {
  const tail = tailPool?.tail;
  const closed = tailPool && !tailPool.kept;
  const price = (pricePerCoreHour(site, p.pool.market) ?? 0) * p.pool.cores;
  const counts = new Map<string, number>();
  for (const j of p.jobs) for (const i of j.inputs) counts.set(i.url, (counts.get(i.url) ?? 0) + 1);
  const input = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0];
  const size = input === undefined ? undefined : (p.jobs.flatMap((j) => j.inputs).find((i) => i.url === input)?.bytes ?? snapshot.sizes?.get(input));
  const cached = input === undefined ? 0 : Math.min(size ?? Infinity, snapshot.holdings?.get(site.name)?.get(input) ?? 0);
  const n = p.jobs.length;
  const jobsText = `${n} pending job${n === 1 ? '' : 's'}`;
  const need =
    input === undefined
      ? `${jobsText}, no declared inputs`
      : size === undefined
        ? `${jobsText} ${n === 1 ? 'needs' : 'need'} ${input} (size unknown, ${bytesText(cached)} cached at ${site.name})`
        : `${jobsText} ${n === 1 ? 'needs' : 'need'} ${input} (${bytesText(size)}, ${bytesText(cached)} cached at ${site.name})`;
  const here =
    p.pool.key === HOME_POOL
      ? 'the home cluster, free'
      : `${p.pool.site} ${p.pool.market === 'spot' ? 'spot' : 'on-demand'} $${price.toFixed(2)}/h${p.newDrones ? `, ${p.newDrones} new drone${p.newDrones === 1 ? '' : 's'}` : ''}`;
  const others = alternatives(p);
  const held = p.budgetHeld ? `; no more drones: $${(site.spentToday ?? 0).toFixed(2)} spent or held today, budget $${(costOf(site).budgetPerDay ?? 0).toFixed(2)} a day` : '';
  const est = p.first?.estimate;
  const runs = est ? `; ${n === 1 ? 'it runs' : 'each runs'} ${durationText(est.ms)} (${estimateText(est)})` : '';
  const kept = tailPool?.kept ? `; the ${n === 1 ? 'job stays' : `${n} jobs stay`} on spot: on demand cannot take ${n === 1 ? 'it' : 'them'} (no room or budget), and a reclaim costs less than not running` : '';
  const why = closed ? tailWhy(p, tail, site) : n === 0 ? idleWhy(p, site) : `${need}: ${here}${held}${others ? `; ${others}` : ''}${runs}${kept}`;
  const release = idleReleasesEarly(p.idle, p.used, costOf(site).bootLatencyMs, site.minLifetime);
  const available = p.pool.drones.filter((d) => d.drone.state === 'available').length;
  // Kept for some tail jobs while others went on demand, the pool drains the drones it does not
  // use: a spot drone left taking jobs takes the tail jobs placed on demand. New drones' slots
  // come after the live ones'.
  const usedLive = [...p.used].filter((i) => i < p.slots.drones - p.newDrones).length;
  const drain = closed ? available : tailPool?.moved ? Math.max(0, available - usedLive) : 0;
  return {
    jobs: p.jobs,
    newDrones: p.newDrones,
    droneBudget: p.reserved,
    prewarm: p.pool.key === HOME_POOL ? [] : [...p.prewarm],
    ...(p.away.length ? { awayFromHome: p.away } : {}),
    ...(release.length ? { release } : {}),
    ...(drain ? { drain } : {}),
    reason: {
      rule: 'estuary',
      why,
      pendingJobs: n,
      newDrones: p.newDrones,
      market: p.pool.market ?? 'on-demand',
      pricePerHour: cents(price),
      computeCost: cents(p.computeCost),
      inputCost: cents(p.inputCost),
      wanCost: cents(p.wanCost),
      wanGB: Math.round(p.wanBytes / 1e8) / 10,
      wanBytes: p.wanBytes,
      outputCost: cents(p.outputCost),
      ...(input !== undefined ? { input, inputBytes: size, cachedBytes: cached } : {}),
      ...(est ? { runS: Math.round(est.ms / 1000), runEstimate: estimateText(est) } : {}),
      finishS: Math.round(p.finish / 1000),
      turnaroundS: Math.round(c.turnaround / 1000),
      ...(budgetLeft(site) !== Infinity ? { budgetLeft: cents(budgetLeft(site)) } : {}),
      ...(closed ? { tailJobs: tail?.tailJobs ?? 0, reclaimChance: cents(tail?.reclaimChance ?? 1), drain } : {}),
      // Not `tailJobs`: a drone draining with that reason holds its pool closed (estuaryPlan).
      ...(tailPool?.kept ? { tailKeptOnSpot: n, reclaimChance: cents(tail?.reclaimChance ?? 1), drain } : {}),
    },
  };
}

/** A spot pool that takes no new job: the tail goes on demand (spot-tail.ts). */
function tailWhy(p: PoolState, t: SpotTail | undefined, site: SiteView): string {
  const rate = costOf(site).spotInterruptionRate;
  const drones = p.pool.drones.filter((d) => d.drone.state === 'available').length;
  const drain = drones ? `; ${drones} spot drone${drones === 1 ? '' : 's'} drain` : '';
  if (!t) return `${label(p.pool)} takes no new job: its drones drain for the tail of the work, which goes on demand${drain}`;
  return (
    `${label(p.pool)} takes no new job: the next would finish in ${durationText(t.nextFinishMs)}, and a reclaim halfway through would restart it past the end of the work (${durationText(t.endMs)}); ` +
    `a reclaim among the ${t.tailJobs} tail job${t.tailJobs === 1 ? '' : 's'} is ${Math.round(t.reclaimChance * 100)} % likely at ${rate} an instance-hour, so they go on demand${drain}`
  );
}

/** A pool that got no job: nothing waiting for it, or work it refused (full, over budget, unhealthy). */
function idleWhy(p: PoolState, site: SiteView): string {
  if (p.unplaced.size === 0) return `no pending job placed at ${label(p.pool)}`;
  const parts = [...p.unplaced].map(([why, n]) => {
    const jobs = `${n} pending job${n === 1 ? '' : 's'}`;
    if (why !== 'over budget') return `${jobs} wait: ${label(p.pool)} ${why}`;
    const drone = droneBudget(site, p.pool.cores, p.pool.market, p.first?.runMs ?? HOUR_MS);
    const cost = costOf(site);
    return `${jobs} wait: ${label(p.pool)} over budget ($${(site.spentToday ?? 0).toFixed(2)} spent or held today, a drone $${drone.toFixed(2)}, budget $${(cost.budgetPerDay ?? 0).toFixed(2)} a day)`;
  });
  return parts.join('; ');
}

/** How the other pools looked for this pool's first job: full, over budget, late, or dearer. */
function alternatives(p: PoolState): string {
  if (!p.first) return '';
  const { evals, turnaround, runMs } = p.first;
  const mine = choose(evals.filter((e) => e.pool === p), turnaround, runMs);
  if (!mine) return '';
  const out: string[] = [];
  const seen = new Set<string>([label(p.pool)]);
  for (const e of evals) {
    const name = label(e.pool.pool);
    if (seen.has(name)) continue;
    seen.add(name);
    const theirs = choose(evals.filter((x) => x.pool === e.pool), turnaround, runMs);
    if (!theirs) out.push(`${name} ${e.refused ?? 'full'}`);
    else if (theirs.finish! > Math.max(turnaround, mine.finish! + LATE_TOLERANCE * runMs)) out.push(`${name} misses the turnaround (${Math.round(theirs.finish! / 60_000)} min)`);
    else out.push(`${name} ${theirs.cost! >= mine.cost! ? '+' : '-'}$${money(Math.abs(theirs.cost! - mine.cost!))} a job`);
  }
  return out.slice(0, 4).join(', ');
}
