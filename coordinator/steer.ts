// Steering: a job the policy placed at a site is made to require that site's drones (every drone
// carries the feature site_<name>), so the batch system runs it there and not on whichever node
// frees first. Only jobs that asked for no features of their own are steered: a user's
// --constraint is never rewritten. The coordinator remembers which jobs it steered where, and
// when it reads the queue back hides exactly that steering from the policy, so a job can be
// placed afresh each interval and moved when the plan changes (a site fills up, falls ill, or runs
// out of budget). A user who wrote --constraint=site_x themselves is never mistaken for it. Pure.

import type { PendingJob } from './model.ts';

const SITE = 'site_';

/** The plan's pool of the home cluster's own nodes, and the pseudo-site of jobs placed there. */
export const HOME_POOL = 'home';
export const HOME_SITE = '(home)';

/**
 * The feature a new job is held by until the coordinator has placed it (`hold: true`): no node
 * carries it, so the scheduler cannot start the job on whichever node is free at submission.
 */
export const HOLD_FEATURE = 'estuary_hold';
const HELD = '(held)';

/**
 * The feature expression that steers to a site: its drones, or the home nodes when they are
 * named and `home` allows them (a job whose inputs are elsewhere is kept off the home nodes); a
 * job placed at home requires the home nodes alone.
 */
export function steering(site: string, homeFeature: string | undefined, home = true): string {
  if (site === HOME_SITE) return homeFeature ?? '';
  return homeFeature && home ? `${SITE}${site}|${homeFeature}` : `${SITE}${site}`;
}

/**
 * The job as the policy should see it: without the one constraint group this coordinator set
 * (`site_x` or `site_x|home`, for a job it remembers steering to x), and with the site it was
 * steered to. Any other constraint is the user's and stays.
 */
export function unsteered(
  job: PendingJob,
  homeFeature: string | undefined,
  steered: ReadonlyMap<string, string>,
  uncertain: ReadonlyMap<string, string> = new Map(),
): PendingJob {
  const only = job.constraints.length === 1 && job.constraints[0]!.length === 1 ? job.constraints[0]![0] : undefined;
  // Held at submission: not placed yet, so any placement (or none) replaces the hold.
  if (only === HOLD_FEATURE) return { ...job, constraints: [], steeredTo: HELD };
  if (job.constraints.length !== 1) return job;
  // A steering call that failed may still have reached some jobs (scontrol takes them in
  // batches), so the site asked for and the one before it are both this coordinator's.
  for (const mine of [steered.get(job.id), uncertain.get(job.id)]) {
    if (mine !== undefined && isOurs(job.constraints[0]!, mine, homeFeature)) return { ...job, constraints: [], steeredTo: mine };
  }
  return job;
}

function isOurs(group: readonly string[], mine: string, homeFeature: string | undefined): boolean {
  if (mine === HOME_SITE) return group.length === 1 && group[0] === homeFeature;
  const sites = group.filter((f) => f.startsWith(SITE));
  const rest = group.filter((f) => !f.startsWith(SITE));
  const ours = sites.length === 1 && (rest.length === 0 || (homeFeature !== undefined && rest.length === 1 && rest[0] === homeFeature));
  return ours && sites[0] === `${SITE}${mine}`;
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
  awayFromHome: ReadonlySet<string> = new Set(),
): SteerRequest[] {
  const bySite = new Map<string, string[]>();
  for (const job of pending) {
    if (job.constraints.length > 0) continue;
    let site = placedAt.get(job.id) ?? '';
    // Home placement needs the home nodes named; without them the job is left free.
    if (site === HOME_SITE && !homeFeature) site = '';
    if ((job.steeredTo ?? '') === site) continue;
    const key = site && site !== HOME_SITE && awayFromHome.has(job.id) ? `${site}\0away` : site;
    const ids = bySite.get(key);
    if (ids) ids.push(job.id);
    else bySite.set(key, [job.id]);
  }
  return [...bySite].map(([key, jobIds]) => {
    const [site, away] = key.split('\0') as [string, string?];
    return { site, features: site ? steering(site, homeFeature, !away) : '', jobIds };
  });
}

/**
 * Jobs whose constraint holds estuary_hold beside features of their own (`gpu&estuary_hold`):
 * no node can run them, and a user's constraint is never rewritten, so each is named once.
 */
export class MixedHolds {
  private readonly named = new Set<string>();

  /** The jobs of `pending` held among their own features and not named before. */
  fresh(pending: readonly PendingJob[]): string[] {
    const now = new Set<string>();
    const fresh: string[] = [];
    for (const job of pending) {
      if (!job.constraints.some((g) => g.includes(HOLD_FEATURE))) continue;
      now.add(job.id);
      if (!this.named.has(job.id)) fresh.push(job.id);
    }
    for (const id of [...this.named]) if (!now.has(id)) this.named.delete(id);
    for (const id of fresh) this.named.add(id);
    return fresh;
  }
}

export function mixedHoldMessage(id: string): string {
  return (
    `job ${id} requires ${HOLD_FEATURE} beside features of its own, so no node can run it and the coordinator does not rewrite it; ` +
    `add ${HOLD_FEATURE} in job_submit only to jobs that ask for no features, and release this one with scontrol update jobid=${id} features=<its own>`
  );
}

export function holdUndeclaredMessage(): string {
  return (
    `hold is on, but no node carries ${HOLD_FEATURE}: slurmctld refuses every job the job_submit plugin holds ("Invalid feature specification"); ` +
    `declare it on a node that never runs jobs, e.g. NodeName=estuary-hold State=FUTURE Features=${HOLD_FEATURE} in slurm.conf, and reconfigure`
  );
}
