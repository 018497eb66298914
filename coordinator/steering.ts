// Steering as the control loop runs it: which pending jobs this coordinator steered (and where),
// the home feature steered jobs may use instead, the hold check, and the steering calls after a
// decision. The rules themselves (what to ask of Slurm, how a steered job reads) are in steer.ts.

import type { Logger } from '../lib/log.ts';
import type { BatchSystem } from './batch/types.ts';
import { poolKey, type PendingJob, type Snapshot } from './model.ts';
import { HOLD_FEATURE, holdUndeclaredMessage, HOME_POOL, HOME_SITE, steerRequests, unsteered } from './steer.ts';

export interface SteeringOptions {
  readonly batch: BatchSystem;
  readonly log: Logger;
  readonly homeFeature?: string;
  readonly hold?: boolean;
  /** Each site's machine types, to tell which site a pool's drones belong to. */
  readonly sites: readonly { readonly name: string; readonly machineTypes: readonly string[] }[];
}

export class Steering {
  private readonly o: SteeringOptions;
  private readonly siteOfPool: ReadonlyMap<string, string>;
  /**
   * Jobs this coordinator steered, and where. In memory: after a restart they keep their
   * site_<name> requirement (read as the user's), so they still run there, just not moved.
   */
  private readonly steered = new Map<string, string>();
  /** Where a job was steered before a steering call that has not been seen to succeed. */
  private readonly steeredBefore = new Map<string, string>();
  /** The home feature steering used last (undefined: not looked for yet), to log changes once. */
  private homeFeatureSeen: string | null | undefined;
  /** Why held jobs cannot be placed (no node declares estuary_hold), or null. */
  warning: string | null = null;

  constructor(options: SteeringOptions) {
    this.o = options;
    this.siteOfPool = new Map(
      options.sites.flatMap((s) => s.machineTypes.flatMap((t) => [[poolKey(s.name, t), s.name], [poolKey(s.name, t, 'spot'), s.name]] as const)),
    );
  }

  /** The pending jobs as the policy must see them: this coordinator's own steering taken off. */
  observe(pending: readonly PendingJob[]): PendingJob[] {
    const waiting = new Set(pending.map((j) => j.id));
    for (const id of [...this.steered.keys()]) if (!waiting.has(id)) this.steered.delete(id);
    for (const id of [...this.steeredBefore.keys()]) if (!waiting.has(id)) this.steeredBefore.delete(id);
    const home = this.o.homeFeature ?? this.homeFeatureSeen ?? undefined;
    this.checkHoldDeclared();
    return pending.map((j) => unsteered(j, home, this.steered, this.steeredBefore));
  }

  /**
   * The feature steering offers as the alternative to a site's drones, so steered jobs may still
   * run at home: the configured `home-feature`, else one every home node carries that no drone
   * does. None: steering is off (and lifted from jobs steered before) — a job must never wait
   * for a drone while a home core it could use sits idle.
   */
  homeFeature(snapshot: Snapshot): string | null {
    if (this.o.homeFeature) return this.o.homeFeature;
    const droneFeatures = new Set(snapshot.pools.flatMap((p) => p.features));
    const found = this.o.batch.homeFeatures?.().find((f) => !droneFeatures.has(f)) ?? null;
    if (found !== this.homeFeatureSeen) {
      this.homeFeatureSeen = found;
      if (found) this.o.log.info({ homeFeature: found }, `steering lets jobs run at home too: site_<name>|${found}`);
      else this.o.log.warn('steering off: no feature every home node carries and no drone does; set controller.home-feature to steer');
    }
    return found;
  }

  /** `hold: true` needs a node carrying estuary_hold, or slurmctld refuses every held job. */
  private checkHoldDeclared(): void {
    const declared = this.o.hold ? this.o.batch.declares?.(HOLD_FEATURE) : undefined;
    const warning = declared === false ? holdUndeclaredMessage() : null;
    if (warning && warning !== this.warning) this.o.log.warn({ code: 'ESTUARY_CO_HOLD_UNDECLARED' }, warning);
    this.warning = warning;
  }

  /** Makes each placed job require its site's drones; a failure is retried next interval. */
  async steer(
    pending: readonly PendingJob[],
    placed: ReadonlyMap<string, readonly PendingJob[]>,
    home: string | null,
    awayFromHome?: ReadonlySet<string>,
  ): Promise<void> {
    const homeFeature = home ?? undefined;
    // Without a home alternative nothing is steered; what was steered before is lifted.
    if (home === null) placed = new Map();
    const placedAt = new Map<string, string>();
    for (const [pool, jobs] of placed) for (const j of jobs) placedAt.set(j.id, pool === HOME_POOL ? HOME_SITE : (this.siteOfPool.get(pool) ?? ''));
    for (const r of steerRequests(pending, placedAt, homeFeature, awayFromHome)) {
      // Recorded before the call: a call cut short (slurmctld restarting between two batches of
      // ids) may have steered some of the jobs, which must still read as ours next interval.
      if (r.site) {
        for (const id of r.jobIds) {
          const before = this.steered.get(id);
          if (before !== undefined && before !== r.site) this.steeredBefore.set(id, before);
          this.steered.set(id, r.site);
        }
      }
      try {
        await this.o.batch.steer(r.jobIds, r.features);
        for (const id of r.jobIds) {
          this.steeredBefore.delete(id);
          if (!r.site) this.steered.delete(id);
        }
        this.o.log.info({ site: r.site || null, jobs: r.jobIds.length, features: r.features }, r.site ? `steered ${r.jobIds.length} job(s) to ${r.site}` : `lifted the steering of ${r.jobIds.length} job(s)`);
      } catch (err) {
        this.o.log.warn({ site: r.site, err: (err as Error).message }, 'cannot steer jobs; tried again next interval');
      }
    }
  }
}
