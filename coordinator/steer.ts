// Steering: a job the policy placed at a site is made to require that site's drones (every drone
// carries the feature site_<name>), so the batch system runs it there and not on whichever node
// frees first. Only jobs that asked for no features of their own are steered: a user's
// --constraint is never rewritten. The coordinator remembers which jobs it steered where, and
// when it reads the queue back hides exactly that steering from the policy, so a job can be
// placed afresh each interval and moved when the plan changes (a site fills up, falls ill, or runs
// out of budget). A user who wrote --constraint=site_x themselves is never mistaken for it. Pure.

import type { PendingJob } from './model.ts';

const SITE = 'site_';

/** The feature expression that steers to a site: its drones, or the home nodes when they are named. */
export function steering(site: string, homeFeature: string | undefined): string {
  return homeFeature ? `${SITE}${site}|${homeFeature}` : `${SITE}${site}`;
}

/**
 * The job as the policy should see it: without the one constraint group this coordinator set
 * (`site_x` or `site_x|home`, for a job it remembers steering to x), and with the site it was
 * steered to. Any other constraint is the user's and stays.
 */
export function unsteered(job: PendingJob, homeFeature: string | undefined, steered: ReadonlyMap<string, string>): PendingJob {
  const mine = steered.get(job.id);
  if (mine === undefined || job.constraints.length !== 1) return job;
  const group = job.constraints[0]!;
  const sites = group.filter((f) => f.startsWith(SITE));
  const rest = group.filter((f) => !f.startsWith(SITE));
  const ours = sites.length === 1 && (rest.length === 0 || (homeFeature !== undefined && rest.length === 1 && rest[0] === homeFeature));
  if (!ours || sites[0] !== `${SITE}${mine}`) return job;
  return { ...job, constraints: [], steeredTo: mine };
}

export interface SteerRequest {
  /** The site to steer to; '' lifts the steering. */
  readonly site: string;
  readonly features: string;
  readonly jobIds: readonly string[];
}

/**
 * What to change: each placed job without constraints of its own that is not yet steered to its
 * pool's site, and each steered job placed nowhere now (its steering is lifted, so it can run
 * wherever room appears). Grouped by site, so one call steers many jobs.
 */
export function steerRequests(
  pending: readonly PendingJob[],
  placedAt: ReadonlyMap<string, string>,
  homeFeature: string | undefined,
): SteerRequest[] {
  const bySite = new Map<string, string[]>();
  for (const job of pending) {
    if (job.constraints.length > 0) continue;
    const site = placedAt.get(job.id) ?? '';
    if ((job.steeredTo ?? '') === site) continue;
    bySite.set(site, [...(bySite.get(site) ?? []), job.id]);
  }
  return [...bySite].map(([site, jobIds]) => ({ site, features: site ? steering(site, homeFeature) : '', jobIds }));
}
