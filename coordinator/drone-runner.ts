// Doing what the drone state machine decided: persist the step, then run its actions against the
// batch system and the drone's site. Every site call goes through SiteCalls, so a slow site is
// asked in the background and backed off per operation, never holding up the loop or another
// site; a deploy that got no answer leaves the drone `unknown`, never `error` (the instance may
// exist), and every failed instance counts towards the site's health.

import type { Logger } from '../lib/log.ts';
import type { BatchSystem } from './batch/types.ts';
import type { Clock } from './clock.ts';
import type { MachineType } from './config.ts';
import type { Decision } from './policy.ts';
import { type Action, step, type Step } from './drone.ts';
import { unanswered } from './errors.ts';
import { type Drone, droneFeatures, type InstanceStatus, type NodeView, type Reason } from './model.ts';
import type { DroneRegistry } from './registry.ts';
import { FailedInstances, SiteCalls } from './site-calls.ts';
import type { DroneSpec, SiteAdapter } from './sites/types.ts';

export interface RunnerOptions {
  readonly registry: DroneRegistry;
  readonly batch: BatchSystem;
  readonly sites: ReadonlyMap<string, SiteAdapter>;
  readonly machineTypes: Readonly<Record<string, MachineType>>;
  readonly clock: Clock;
  readonly log: Logger;
  readonly intervalMs: number;
  readonly bootTimeout: (site: string) => number;
  readonly onTransition?: (drone: Drone, from: Drone['state'] | null) => void;
}

/** States a drone reaches when its instance failed before it was of use. */
const FAILED_RULES = new Set(['deploy-failed', 'site-error', 'boot-timeout', 'deploy-unconfirmed']);

export class DroneRunner {
  private readonly o: RunnerOptions;
  readonly calls: SiteCalls;
  readonly failures = new FailedInstances();
  /** When each drone that stays busy was last seen busy, not yet written (see apply). */
  private readonly busyAt = new Map<string, number>();

  constructor(o: RunnerOptions) {
    this.o = o;
    this.calls = new SiteCalls(o.intervalMs);
  }

  /**
   * Steps the site's drones in the background (after its earlier calls). A site whose calls of
   * the last interval still run is skipped: its drones keep their state until it answers.
   */
  stepSite(site: string, ids: readonly string[], nodes: ReadonlyMap<string, NodeView>, absent: NodeView): Promise<void> | undefined {
    if (ids.length === 0 || this.calls.isBusy(site)) return undefined;
    const one = async (id: string) => {
      // Read again: a release in this interval may have moved it since the ids were taken.
      const d = this.o.registry.get(id);
      if (!d || d.state === 'down') return;
      const instance = await this.status(d);
      // A busy drone's busy time moves every interval; it is kept here and written when it ends.
      const busyAt = this.busyAt.get(d.id);
      const seen = busyAt !== undefined && busyAt > d.lastBusyAt ? { ...d, lastBusyAt: busyAt } : d;
      await this.apply(d, step(seen, { instance, node: nodes.get(d.id) ?? absent }, this.o.clock.now(), { bootTimeout: this.o.bootTimeout(site) }));
    };
    // Drones still to be deployed go one after another (a deploy that fails backs the next off);
    // of the others the first probes the site and the rest are asked at once only if it
    // answered, so a failing site costs one call (and one back-off step), not one per drone.
    const deploying = ids.filter((id) => this.o.registry.get(id)?.state === 'requested');
    const others = ids.filter((id) => !deploying.includes(id));
    return this.calls.enqueue(site, async () => {
      if (others.length) {
        await one(others[0]!);
        await Promise.all(others.slice(1).map(one));
      }
      for (const id of deploying) await one(id);
    });
  }

  private async status(d: Drone): Promise<InstanceStatus> {
    const site = this.o.sites.get(d.site);
    const now = this.o.clock.now();
    if (!site || this.calls.blocked(d.site, 'status', now)) return 'unknown';
    try {
      const s = await site.status(d.id, d.instance);
      this.calls.succeeded(d.site, 'status');
      return s;
    } catch (err) {
      this.siteFailed(d.site, 'status', err);
      return 'unknown';
    }
  }

  private siteFailed(site: string, op: 'status' | 'deploy' | 'stop', err: unknown): void {
    const delay = this.calls.failed(site, op, err, this.o.clock.now());
    this.o.log.warn({ site, op, err: (err as Error).message, retryInS: delay / 1000 }, `site ${op} failed: backed off; its drones keep their state`);
  }

  /** Persists a state change (and counts the site's failed or working instances). */
  transition(d: Drone, state: Drone['state'], reason: Reason, extra: Partial<Drone> = {}): Drone {
    const now = this.o.clock.now();
    const next: Drone = { ...d, ...extra, state, reason, stateSince: now };
    this.o.registry.put(next, now);
    this.o.log.info({ drone: d.id, from: d.state, to: state, reason }, 'drone transition');
    this.o.onTransition?.(next, d.state);
    if (state === 'available') this.failures.worked(d.site);
    // A spot instance taken back before it ran is the market, not a broken site: not counted.
    if (state === 'error' && FAILED_RULES.has(reason.rule) && reason.instance !== 'interrupting') {
      const f = this.failures.failed(d.site, reason.rule, now);
      const why = this.failures.unhealthy(d.site);
      if (why) this.o.log.warn({ site: d.site, failedInARow: f.consecutive, retryInS: Math.round((f.until - now) / 1000) }, `site ${d.site} unhealthy: ${why}; no new drone there for a while`);
    }
    return next;
  }

  /** Persists the step, then performs its actions; a failed action is retried next interval. */
  async apply(d: Drone, s: Step): Promise<void> {
    const changed = s.state !== d.state;
    const now = this.o.clock.now();
    let next: Drone;
    if (changed) next = this.transition(d, s.state, s.reason, { lastBusyAt: s.lastBusyAt });
    else {
      next = { ...d, lastBusyAt: s.lastBusyAt };
      // Only changes are written: a drone that stays busy moves its busy time in memory, and the
      // registry gets it when the drone falls idle or changes state (a restart in between sees
      // the time it became busy: its idle time then starts at most one busy spell early).
      const stillBusy = s.lastBusyAt === now && this.busyAt.has(d.id);
      if (!stillBusy && s.lastBusyAt !== d.lastBusyAt) this.o.registry.put(next, now);
    }
    if (!changed && s.lastBusyAt === now) this.busyAt.set(d.id, now);
    else this.busyAt.delete(d.id);
    for (const action of s.actions) {
      if (action === 'deploy') {
        await this.deploy(next);
        return;
      }
      try {
        await this.perform(next, action);
      } catch (err) {
        if (action === 'stop') this.siteFailed(d.site, 'stop', err);
        else this.o.log.warn({ drone: d.id, action, err: (err as Error).message }, 'action failed; retried next interval');
        // A node Slurm will not delete ("Requested nodes are busy": a job still ends there) or
        // cannot be asked about is not stopped under it: that would kill the job and leave
        // the node DOWN. Both actions are tried again next interval.
        if (action === 'remove-node') return;
      }
    }
  }

  private async perform(d: Drone, action: Exclude<Action, 'deploy'>): Promise<void> {
    switch (action) {
      case 'integrate':
        return this.o.batch.integrate(d.id, `estuary ${d.site}/${d.machineType}`);
      case 'drain':
        return this.o.batch.drain(d.id, `estuary: ${d.reason.rule}`);
      case 'remove-node':
        return this.o.batch.remove(d.id, d.state === 'lost' || d.state === 'error');
      case 'stop': {
        if (this.calls.blocked(d.site, 'stop', this.o.clock.now())) return;
        await this.o.sites.get(d.site)!.stop(d.id, d.instance);
        this.calls.succeeded(d.site, 'stop');
        return;
      }
    }
  }

  /**
   * Asks the site for the instance. Refused: `error` (cleaned up by its state). No answer:
   * `unknown`, asked about by id each interval, never deployed again.
   */
  async deploy(d: Drone): Promise<void> {
    if (this.calls.blocked(d.site, 'deploy', this.o.clock.now())) return;
    try {
      const instance = await this.o.sites.get(d.site)!.deploy(this.spec(d));
      this.calls.succeeded(d.site, 'deploy');
      const current = this.o.registry.get(d.id)!;
      this.o.registry.put({ ...current, instance }, this.o.clock.now());
    } catch (err) {
      this.siteFailed(d.site, 'deploy', err);
      const current = this.o.registry.get(d.id)!;
      if (current.state !== 'requested') return;
      const error = (err as Error).message.slice(0, 200);
      if (unanswered(err)) this.transition(current, 'unknown', { rule: 'deploy-unanswered', error });
      else this.transition(current, 'error', { rule: 'deploy-failed', error });
    }
  }

  /** A start decision: the drone is written as requested, then deployed in the site's turn. */
  start(dec: Extract<Decision, { kind: 'start' }>, id: string): void {
    const now = this.o.clock.now();
    const drone: Drone = {
      id,
      site: dec.site,
      machineType: dec.machineType,
      ...(dec.market ? { market: dec.market } : {}),
      state: 'requested',
      createdAt: now,
      stateSince: now,
      lastBusyAt: now,
      instance: {},
      reason: dec.reason,
      startReason: dec.reason,
      ...(dec.pricePerCoreHour !== undefined ? { pricePerCoreHour: dec.pricePerCoreHour } : {}),
      ...(dec.budget !== undefined ? { budget: dec.budget } : {}),
    };
    this.o.registry.put(drone, now);
    this.o.onTransition?.(drone, null);
    this.o.log.info({ drone: id, site: dec.site, machineType: dec.machineType, reason: dec.reason }, 'starting drone');
    void this.calls.enqueue(dec.site, () => this.deploy(drone));
  }

  private spec(d: Drone): DroneSpec {
    const type = this.o.machineTypes[d.machineType]!;
    return {
      id: d.id,
      site: d.site,
      machineType: d.machineType,
      cores: type.cores,
      memoryMb: Math.floor(type.memory / 1_048_576),
      features: droneFeatures(d.site, d.machineType, type.features),
      ...(d.market ? { market: d.market } : {}),
    };
  }
}
