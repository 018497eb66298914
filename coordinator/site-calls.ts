// Calls to the sites, each site on its own: one site's slow or hanging API never delays another
// site's calls or the control loop (the loop does not wait for them), and each operation
// (status, deploy, stop) backs off on its own — growing with every failure of that operation and
// reset only when that same operation succeeds, so a site whose status calls answer while its
// deploys time out is not asked to deploy every interval.

import { backoffDelay } from '../lib/backoff.ts';

/** A failing operation is left alone this long at most before it is tried again. */
export const SITE_BACKOFF_MAX_MS = 5 * 60_000;

export type SiteOp = 'status' | 'deploy' | 'stop';

export interface Backoff {
  readonly attempt: number;
  readonly until: number;
  readonly error: string;
}

export class SiteCalls {
  private readonly intervalMs: number;
  /** The work in flight per site; a site is busy until its chain settles. */
  private readonly chains = new Map<string, Promise<void>>();
  private readonly busy = new Set<string>();
  private readonly backoff = new Map<string, Backoff>();

  constructor(intervalMs: number) {
    this.intervalMs = intervalMs;
  }

  isBusy(site: string): boolean {
    return this.busy.has(site);
  }

  /** Runs `work` after the site's earlier work, in the background; errors are the work's own. */
  enqueue(site: string, work: () => Promise<void>): Promise<void> {
    this.busy.add(site);
    const chain = (this.chains.get(site) ?? Promise.resolve()).then(work).catch(() => undefined);
    this.chains.set(site, chain);
    return chain.then(() => {
      if (this.chains.get(site) === chain) {
        this.chains.delete(site);
        this.busy.delete(site);
      }
    });
  }

  /** Resolves once every site's work has finished (tests, and a stop that waits a little). */
  async settle(): Promise<void> {
    while (this.chains.size > 0) await Promise.all([...this.chains.values()]).then(() => new Promise((r) => setImmediate(r)));
  }

  blocked(site: string, op: SiteOp, now: number): boolean {
    const b = this.backoff.get(`${site}/${op}`);
    return b !== undefined && now < b.until;
  }

  /** One interval, then two, four … up to 5 minutes; returns the delay. No jitter: one caller. */
  failed(site: string, op: SiteOp, err: unknown, now: number): number {
    const key = `${site}/${op}`;
    const attempt = (this.backoff.get(key)?.attempt ?? 0) + 1;
    const delay = backoffDelay(attempt - 1, { baseMs: this.intervalMs, maxMs: SITE_BACKOFF_MAX_MS }, () => 1);
    this.backoff.set(key, { attempt, until: now + delay, error: (err as Error).message });
    return delay;
  }

  succeeded(site: string, op: SiteOp): void {
    this.backoff.delete(`${site}/${op}`);
  }

  /** Operations of the site backed off now, with the last error of each. */
  failing(site: string, now: number): { op: SiteOp; error: string; retryInS: number }[] {
    const out: { op: SiteOp; error: string; retryInS: number }[] = [];
    for (const op of ['status', 'deploy', 'stop'] as const) {
      const b = this.backoff.get(`${site}/${op}`);
      if (b && now < b.until) out.push({ op, error: b.error, retryInS: Math.ceil((b.until - now) / 1000) });
    }
    return out;
  }
}

/**
 * Instances that failed in a row (deploy refused, boot timeout, site error, deploy never
 * confirmed) before the site is called unhealthy. Three: one failure is noise (a capacity blip,
 * one bad host), two may be chance, a third in a row with no drone becoming available between
 * them is a broken image, quota or network, and each further launch is billed for nothing.
 */
export const FAILED_INSTANCES_UNHEALTHY = 3;
/** The first pause after that many failures; it doubles with each further one (to 30 min). */
export const FAILED_BACKOFF_BASE_MS = 60_000;
export const FAILED_BACKOFF_MAX_MS = 30 * 60_000;

export interface InstanceFailures {
  readonly consecutive: number;
  readonly last: string;
  /** No new drone there before this (ms; 0: none held back). */
  readonly until: number;
}

/** Counts each site's instances that failed in a row; one that becomes available resets it. */
export class FailedInstances {
  private readonly bySite = new Map<string, InstanceFailures>();

  failed(site: string, why: string, now: number): InstanceFailures {
    const consecutive = (this.bySite.get(site)?.consecutive ?? 0) + 1;
    const over = consecutive - FAILED_INSTANCES_UNHEALTHY;
    const until = over < 0 ? 0 : now + backoffDelay(over, { baseMs: FAILED_BACKOFF_BASE_MS, maxMs: FAILED_BACKOFF_MAX_MS }, () => 1);
    const f = { consecutive, last: why, until };
    this.bySite.set(site, f);
    return f;
  }

  worked(site: string): void {
    this.bySite.delete(site);
  }

  get(site: string): InstanceFailures | undefined {
    return this.bySite.get(site);
  }

  /** Why the site is unhealthy for its instances, or undefined. */
  unhealthy(site: string): string | undefined {
    const f = this.bySite.get(site);
    if (!f || f.consecutive < FAILED_INSTANCES_UNHEALTHY) return undefined;
    return `${f.consecutive} instances in a row failed (last: ${f.last})`;
  }

  /** True while new drones are held back there. */
  holding(site: string, now: number): boolean {
    const f = this.bySite.get(site);
    return f !== undefined && now < f.until;
  }
}
