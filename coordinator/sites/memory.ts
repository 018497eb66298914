// A site in memory, for unit tests and simulation: instances boot after a delay on the given
// clock, and faults can be injected (API down, instance that never boots, instance that dies).

import type { Clock } from '../clock.ts';
import { coordinatorErrors } from '../errors.ts';
import type { InstanceStatus } from '../model.ts';
import type { DroneSpec, InstanceData, SiteAdapter } from './types.ts';

interface Instance {
  spec: DroneSpec;
  bootAt: number;
  status: Exclude<InstanceStatus, 'unknown'>;
}

export class MemorySite implements SiteAdapter {
  readonly name: string;
  readonly instances = new Map<string, Instance>();
  /** When true every call throws, as a site whose API is down. */
  down = false;
  /** Instances deployed from now on never leave booting. */
  neverBoot = false;
  deploys = 0;
  /**
   * The next deploys get no answer (as a timeout): `late` ones are made anyway, `lost` ones not.
   * The order is taken from the front, one per deploy.
   */
  unanswered: ('late' | 'lost')[] = [];
  private readonly clock: Clock;
  private readonly bootMs: number;

  constructor(name: string, clock: Clock, bootMs = 5000) {
    this.name = name;
    this.clock = clock;
    this.bootMs = bootMs;
  }

  private check(): void {
    if (this.down) throw new Error(`site ${this.name} API unreachable`);
  }

  async deploy(spec: DroneSpec): Promise<InstanceData> {
    this.check();
    const fault = this.instances.has(spec.id) ? undefined : this.unanswered.shift();
    if (fault === 'lost') throw coordinatorErrors.siteUnanswered(this.name, 'start', 'no answer in 5000 ms');
    if (!this.instances.has(spec.id)) {
      this.deploys++;
      this.instances.set(spec.id, {
        spec,
        bootAt: this.neverBoot ? Infinity : this.clock.now() + this.bootMs,
        status: 'booting',
      });
    }
    if (fault === 'late') throw coordinatorErrors.siteUnanswered(this.name, 'start', 'no answer in 5000 ms');
    return { fake: spec.id };
  }

  async status(id: string): Promise<Exclude<InstanceStatus, 'unknown'>> {
    this.check();
    const i = this.instances.get(id);
    if (!i) return 'deleted';
    if (i.status === 'booting' && this.clock.now() >= i.bootAt) i.status = 'running';
    return i.status;
  }

  async stop(id: string): Promise<void> {
    this.check();
    this.instances.delete(id);
  }

  async list(prefix: string): Promise<string[]> {
    this.check();
    return [...this.instances.keys()].filter((id) => id.startsWith(prefix));
  }

  /** Test helper: the site announces it takes the instance back soon (a spot interruption notice). */
  interrupt(id: string): void {
    const i = this.instances.get(id);
    if (i) i.status = 'interrupting';
  }

  /** Test helper: the instance dies under the coordinator. */
  kill(id: string): void {
    this.instances.delete(id);
  }

  running(): string[] {
    return [...this.instances.entries()].filter(([, i]) => i.status === 'running').map(([id]) => id);
  }
}
