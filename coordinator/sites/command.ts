// The `command` site: drones started, stopped and watched by commands the admin supplies, the
// way sites script their own clouds today. Each command runs with /bin/sh -c and gets the drone
// in its environment (docs/COORDINATOR.md, "command sites"):
//   ESTUARY_DRONE_ID, _SITE, _TYPE, _CORES, _MEMORY_MB, _FEATURES (comma-separated),
//   ESTUARY_DRONE_DATA (JSON of what start printed), ESTUARY_PREFIX (for list).
// start may print KEY=VALUE lines (an instance id, an address): they are kept with the drone.
// status prints one word: booting, running, stopped, deleted or error. list prints ids.

import type { z } from 'zod';
import type { commandSiteSchema } from '../config.ts';
import { coordinatorErrors } from '../errors.ts';
import type { InstanceStatus } from '../model.ts';
import { complaint, runProgram } from '../proc.ts';
import { droneEnv } from './env.ts';
import type { DroneSpec, InstanceData, SiteAdapter } from './types.ts';

type CommandConfig = z.infer<typeof commandSiteSchema>;

const STATUSES = new Set(['booting', 'running', 'interrupting', 'stopped', 'deleted', 'error']);

export class CommandSite implements SiteAdapter {
  readonly name: string;
  private readonly c: CommandConfig;

  constructor(name: string, config: CommandConfig) {
    this.name = name;
    this.c = config;
  }

  private async sh(op: string, script: string, env: Record<string, string>): Promise<string> {
    let r;
    try {
      r = await runProgram('/bin/sh', ['-c', script], { env: { ...process.env, ...env }, timeoutMs: this.c.timeout });
    } catch (err) {
      throw coordinatorErrors.siteUnanswered(this.name, op, (err as Error).message);
    }
    if (r.code !== 0) throw coordinatorErrors.siteFailed(this.name, op, complaint(r));
    return r.stdout;
  }

  private env(id: string, data: InstanceData = {}): Record<string, string> {
    return { ESTUARY_DRONE_ID: id, ESTUARY_DRONE_SITE: this.name, ESTUARY_DRONE_DATA: JSON.stringify(data) };
  }

  async deploy(spec: DroneSpec): Promise<InstanceData> {
    const out = await this.sh('start', this.c.start, { ...this.env(spec.id), ...droneEnv(spec), ESTUARY_DRONE_SITE: this.name });
    const data: Record<string, string> = {};
    for (const line of out.split('\n')) {
      const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line.trim());
      if (m) data[m[1]!] = m[2]!;
    }
    return data;
  }

  async status(id: string, data: InstanceData): Promise<Exclude<InstanceStatus, 'unknown'>> {
    const word = (await this.sh('status', this.c.status, this.env(id, data))).trim().split(/\s+/)[0] ?? '';
    if (!STATUSES.has(word))
      throw coordinatorErrors.siteFailed(this.name, 'status', `printed "${word.slice(0, 40)}", expected booting, running, stopped, deleted or error`);
    return word as Exclude<InstanceStatus, 'unknown'>;
  }

  async stop(id: string, data: InstanceData): Promise<void> {
    await this.sh('stop', this.c.stop, this.env(id, data));
  }

  async list(prefix: string): Promise<string[]> {
    if (!this.c.list) return [];
    const out = await this.sh('list', this.c.list, { ESTUARY_PREFIX: prefix });
    return out.split('\n').map((l) => l.trim()).filter((l) => l.startsWith(prefix));
  }
}
