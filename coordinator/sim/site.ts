// A simulated cloud or opportunistic site behind the coordinator's SiteAdapter contract: boots
// take the scenario's time, API calls fail at its error rate, spot instances are reclaimed at
// its interruption rate, the site's own capacity refuses deploys beyond it, and every instance
// is billed from deploy to stop at its market's price. Events (boot done, reclaim) go to the
// simulator's queue; the coordinator only ever sees the adapter's answers.

import type { Clock } from '../clock.ts';
import type { InstanceStatus, Market } from '../model.ts';
import type { DroneSpec, InstanceData, SiteAdapter } from '../sites/types.ts';
import type { SimSiteConfig } from './scenario.ts';
import type { World } from './world.ts';

export interface SimInstance {
  readonly spec: DroneSpec;
  readonly market: Market;
  readonly bootAt: number;
  readonly price: number;
  status: 'booting' | 'running';
}

export type SiteEvent = { at: number; kind: 'boot' | 'reclaim'; site: string; id: string };

export class SimSite implements SiteAdapter {
  readonly name: string;
  readonly instances = new Map<string, SimInstance>();
  deploys = 0;
  reclaims = 0;
  apiErrors = 0;
  private readonly c: SimSiteConfig;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly world: World;
  private readonly emit: (ev: SiteEvent) => void;

  constructor(c: SimSiteConfig, clock: Clock, random: () => number, world: World, emit: (ev: SiteEvent) => void) {
    this.name = c.name;
    this.c = c;
    this.clock = clock;
    this.random = random;
    this.world = world;
    this.emit = emit;
  }

  private api(op: string): void {
    if (this.c.apiErrorRate > 0 && this.random() < this.c.apiErrorRate) {
      this.apiErrors++;
      throw new Error(`site ${this.name}: ${op}: simulated API error`);
    }
  }

  async deploy(spec: DroneSpec): Promise<InstanceData> {
    this.api('deploy');
    if (this.instances.has(spec.id)) return { sim: spec.id };
    if (this.c.capacity !== undefined && this.instances.size >= this.c.capacity)
      throw new Error(`site ${this.name}: quota exceeded (${this.c.capacity} instances)`);
    const now = this.clock.now();
    const market: Market = spec.market ?? (this.c.spot ? 'spot' : 'on-demand');
    const price = market === 'spot' ? (this.c.config.spotPerCoreHour ?? this.c.config.costPerCoreHour) : this.c.config.costPerCoreHour;
    const bootAt = now + this.c.boot + this.random() * this.c.bootJitter;
    this.instances.set(spec.id, { spec, market, bootAt, price, status: 'booting' });
    this.deploys++;
    this.world.bill(now, spec.cores, price, 1);
    this.emit({ at: bootAt, kind: 'boot', site: this.name, id: spec.id });
    if (market === 'spot' && this.c.spotInterruptionRate > 0) {
      // Reclaims are a Poisson process per instance: an exponential time to the first one.
      const afterMs = (-Math.log(1 - this.random()) / this.c.spotInterruptionRate) * 3_600_000;
      this.emit({ at: now + afterMs, kind: 'reclaim', site: this.name, id: spec.id });
    }
    return { sim: spec.id };
  }

  async status(id: string): Promise<Exclude<InstanceStatus, 'unknown'>> {
    this.api('status');
    return this.instances.get(id)?.status ?? 'deleted';
  }

  async stop(id: string): Promise<void> {
    this.api('stop');
    this.end(id);
  }

  async list(prefix: string): Promise<string[]> {
    this.api('list');
    return [...this.instances.keys()].filter((id) => id.startsWith(prefix));
  }

  /** The instance is gone (stopped or reclaimed): billing ends. */
  end(id: string): SimInstance | undefined {
    const i = this.instances.get(id);
    if (!i) return undefined;
    this.instances.delete(id);
    this.world.bill(this.clock.now(), i.spec.cores, i.price, -1);
    return i;
  }

  /** Handles a boot or reclaim event; returns the instance that booted, if one did. */
  event(ev: SiteEvent): SimInstance | undefined {
    const i = this.instances.get(ev.id);
    if (!i) return undefined;
    if (ev.kind === 'boot') {
      i.status = 'running';
      return i;
    }
    this.reclaims++;
    this.end(ev.id);
    return undefined;
  }
}
