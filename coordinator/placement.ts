// Which pool each pending job counts as demand for. The core places first-fit in the order sites
// are configured, within each pool's room (idle cores plus the cores its quota still allows);
// the data- and cost-aware placement replaces this one function and nothing else. Pure.

import type { PendingJob, PoolView, Snapshot } from './model.ts';

export type Placement = (snapshot: Snapshot) => ReadonlyMap<string, readonly PendingJob[]>;

/** True when a drone of this pool could run the job at all. */
export function fits(job: PendingJob, pool: PoolView): boolean {
  if (job.cpus > pool.cores || job.memoryMb > pool.memoryMb) return false;
  return job.constraints.every((anyOf) => anyOf.some((f) => pool.features.includes(f)));
}

/**
 * Why no drone of any pool could run the job, in words an admin can act on, or undefined when
 * some pool could. The closest miss is named: cores, then memory, then the features no drone has.
 */
export function whyNoPool(job: PendingJob, pools: readonly PoolView[]): string | undefined {
  if (pools.some((p) => fits(job, p))) return undefined;
  if (pools.length === 0) return 'no pool is configured';
  const maxCores = Math.max(...pools.map((p) => p.cores));
  if (job.cpus > maxCores) return `asks ${job.cpus} cores; the largest drone has ${maxCores}`;
  const maxMem = Math.max(...pools.filter((p) => p.cores >= job.cpus).map((p) => p.memoryMb));
  if (job.memoryMb > maxMem) return `asks ${job.memoryMb} MB memory; the largest drone has ${maxMem} MB`;
  const features = new Set(pools.flatMap((p) => p.features));
  const missing = job.constraints.filter((anyOf) => !anyOf.some((f) => features.has(f))).map((g) => g.join('|'));
  if (missing.length) return `needs feature ${missing.join(' and ')}, which no drone has${missing.some((m) => m.startsWith('site_')) ? ' (no such site configured)' : ''}`;
  return 'no single drone has all its features, cores and memory at once';
}

export const firstFit: Placement = (snapshot) => {
  const placed = new Map<string, PendingJob[]>(snapshot.pools.map((p) => [p.key, []]));
  const siteOf = new Map(snapshot.sites.map((s) => [s.name, s]));
  const liveAt = new Map<string, number>();
  for (const pool of snapshot.pools)
    liveAt.set(pool.site, (liveAt.get(pool.site) ?? 0) + pool.drones.filter((d) => d.drone.state !== 'down').length);
  const room = new Map<string, number>();
  for (const pool of snapshot.pools) {
    const site = siteOf.get(pool.site);
    const idle = pool.drones
      .filter((d) => d.drone.state !== 'draining' && isLive(d.drone.state))
      .reduce((s, d) => s + (d.node.status === 'available' ? d.node.cpus - d.node.allocCpus : pool.cores), 0);
    const free = site && site.healthy ? Math.max(0, site.quota - (liveAt.get(pool.site) ?? 0)) : 0;
    room.set(pool.key, idle + free * pool.cores);
  }
  for (const job of [...snapshot.pending].sort((a, b) => a.submittedAt - b.submittedAt)) {
    const candidates = snapshot.pools.filter((p) => fits(job, p));
    const pool = candidates.find((p) => (room.get(p.key) ?? 0) >= job.cpus) ?? candidates[0];
    if (!pool) continue;
    placed.get(pool.key)!.push(job);
    room.set(pool.key, (room.get(pool.key) ?? 0) - job.cpus);
  }
  return placed;
};

function isLive(state: string): boolean {
  return state === 'requested' || state === 'unknown' || state === 'booting' || state === 'integrating' || state === 'available' || state === 'draining';
}
