// The `netns` site: each instance is a network namespace on this host, with its own veth on a
// host bridge, its own address and host name, running a real slurmd that joins the cluster as a
// dynamic node. It is the site the tests and the demo burst into; a WAN link is emulated by tbf
// on each veth when `bandwidth` is set. Everything a deploy creates is undone by stop(), and a
// deploy that fails half-way undoes what it did.
//
// slurmd is started with nsenter (net) + unshare (uts, mount), not `ip netns exec`: the latter remounts
// /sys, and slurmd then dies for want of /sys/fs/cgroup. Each slurmd has its own spool, log and
// pid file under runDir/<id> (slurm.conf uses %n), or a new slurmd would kill the previous one.

import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, closeSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import type { netnsSiteSchema } from '../config.ts';
import { coordinatorErrors } from '../errors.ts';
import { complaint, runProgram } from '../proc.ts';
import { droneEnv } from './env.ts';
import type { DroneSpec, InstanceData, SiteAdapter } from './types.ts';

type NetnsConfig = z.infer<typeof netnsSiteSchema>;

const NETNS_DIR = '/run/netns';

async function ip(args: readonly string[]): Promise<string> {
  const r = await runProgram('ip', args, { timeoutMs: 10_000 });
  if (r.code !== 0) throw new Error(`ip ${args.join(' ')}: ${complaint(r)}`);
  return r.stdout;
}

/** veth names are at most 15 bytes: a hash of the drone id keeps them unique and short. */
export function vethName(id: string): string {
  return `ve${createHash('sha256').update(id).digest('hex').slice(0, 10)}`;
}

export class NetnsSite implements SiteAdapter {
  readonly name: string;
  private readonly c: NetnsConfig;
  private readonly base: string;
  /** Serialises address picking: two deploys in one interval must not take the same one. */
  private picking: Promise<unknown> = Promise.resolve();
  /**
   * Addresses handed out and not yet visible in a namespace: a second deploy running while the
   * first has not configured its address yet must not pick it again (two drones on one address
   * lose each other's job launches).
   */
  private readonly reserved = new Map<string, string>();
  /**
   * Addresses are handed out round-robin, not lowest-first: slurmctld retries its kill of a lost
   * node's jobs to that node's address, and a new drone that got the address at once received
   * it and killed the very jobs Slurm had just requeued onto it.
   */
  private lastHost = 9;

  constructor(name: string, config: NetnsConfig) {
    this.name = name;
    this.c = config;
    this.base = config.subnet.replace(/0\/24$/, '');
  }

  private async usedAddresses(): Promise<Set<string>> {
    const used = new Set<string>([this.c.gateway, ...this.reserved.values()]);
    const all = await ip(['-o', '-4', 'addr', 'show']);
    for (const m of all.matchAll(/inet (\d+\.\d+\.\d+\.\d+)\//g)) used.add(m[1]!);
    for (const ns of this.namespaces()) {
      try {
        for (const m of (await ip(['-n', ns, '-o', '-4', 'addr', 'show'])).matchAll(/inet (\d+\.\d+\.\d+\.\d+)\//g))
          used.add(m[1]!);
      } catch {
        // being deleted
      }
    }
    return used;
  }

  private namespaces(): string[] {
    try {
      return readdirSync(NETNS_DIR);
    } catch {
      return [];
    }
  }

  private pickAddress(id: string): Promise<string> {
    const next = this.picking.then(async () => {
      const used = await this.usedAddresses();
      for (let i = 1; i <= 245; i++) {
        const host = 10 + ((this.lastHost - 10 + i) % 245);
        if (used.has(`${this.base}${host}`)) continue;
        this.lastHost = host;
        this.reserved.set(id, `${this.base}${host}`);
        return `${this.base}${host}`;
      }
      throw coordinatorErrors.siteFailed(this.name, 'deploy', `no free address left in ${this.c.subnet}`);
    });
    this.picking = next.catch(() => undefined);
    return next;
  }

  async deploy(spec: DroneSpec): Promise<InstanceData> {
    if (existsSync(join(NETNS_DIR, spec.id)) && (await this.status(spec.id)) === 'running') {
      return { namespace: spec.id };
    }
    await this.stop(spec.id); // a half-made instance from a crash: start clean
    const veth = vethName(spec.id);
    const address = await this.pickAddress(spec.id);
    try {
      await ip(['netns', 'add', spec.id]);
      await ip(['link', 'add', veth, 'type', 'veth', 'peer', 'name', `${veth}p`]);
      await ip(['link', 'set', `${veth}p`, 'netns', spec.id]);
      await ip(['-n', spec.id, 'link', 'set', `${veth}p`, 'name', 'eth0']);
      await ip(['link', 'set', veth, 'master', this.c.bridge, 'up']);
      await ip(['-n', spec.id, 'addr', 'add', `${address}/24`, 'dev', 'eth0']);
      await ip(['-n', spec.id, 'link', 'set', 'eth0', 'up']);
      await ip(['-n', spec.id, 'link', 'set', 'lo', 'up']);
      await ip(['-n', spec.id, 'route', 'add', 'default', 'via', this.c.gateway]);
      if (this.c.bandwidth) await this.shape(spec.id, veth, this.c.bandwidth);
      const pid = this.startSlurmd(spec, address);
      // nsenter joins the namespace a moment after it is spawned; until then the namespace holds
      // no process and status() would call it failed. Return only once slurmd is inside.
      for (let i = 0; (await this.pids(spec.id)).length === 0; i++) {
        if (i >= 100) throw new Error('slurmd did not start in the namespace within 5 s');
        await new Promise((r) => setTimeout(r, 50));
      }
      return { namespace: spec.id, address, veth, pid };
    } catch (err) {
      await this.stop(spec.id);
      throw coordinatorErrors.siteFailed(this.name, 'deploy', (err as Error).message);
    }
  }

  /** tbf both ways: on the host's end (to the drone) and on eth0 in the namespace (from it). */
  private async shape(ns: string, veth: string, rate: string): Promise<void> {
    const tbf = ['root', 'tbf', 'rate', rate, 'burst', '256kb', 'latency', '50ms'];
    for (const args of [['qdisc', 'add', 'dev', veth, ...tbf], ['-n', ns, 'qdisc', 'add', 'dev', 'eth0', ...tbf]]) {
      const r = await runProgram('tc', args, { timeoutMs: 10_000 });
      if (r.code !== 0) throw new Error(`tc ${args.join(' ')}: ${complaint(r)}`);
    }
  }

  private startSlurmd(spec: DroneSpec, address: string): number {
    const dir = join(this.c.runDir, spec.id);
    mkdirSync(dir, { recursive: true });
    const out = openSync(join(dir, 'slurmd.out'), 'a');
    const conf = `CPUs=${spec.cores} RealMemory=${spec.memoryMb} Feature=${spec.features.join(',')}`;
    // The host name is set in a fresh UTS namespace, the boot script runs (its mounts land in the
    // instance's own mount namespace, as on a VM, and vanish with it), then slurmd replaces the
    // shell: the namespace's processes are slurmd, its jobs and what the boot script left running.
    const script = 'hostname "$1" && { [ -z "$4" ] || "$4"; } && exec "$2" -D -Z -N "$1" --conf "$3"';
    const child = spawn(
      'nsenter',
      [
        `--net=${join(NETNS_DIR, spec.id)}`, 'unshare', '--uts', '--mount', '--propagation', 'private', '--',
        'sh', '-c', script, 'sh', spec.id, this.c.slurmd, conf, this.c.boot ?? '',
      ],
      {
        detached: true,
        stdio: ['ignore', out, out],
        env: { ...process.env, ...droneEnv(spec), ESTUARY_DRONE_ADDRESS: address, ESTUARY_DRONE_DIR: dir, SLURM_CONF: this.c.slurmConf },
      },
    );
    closeSync(out);
    child.unref();
    if (child.pid === undefined) throw new Error('could not start slurmd');
    return child.pid;
  }

  private async pids(id: string): Promise<number[]> {
    try {
      return (await ip(['netns', 'pids', id])).split('\n').filter(Boolean).map(Number);
    } catch {
      return [];
    }
  }

  async status(id: string): Promise<'running' | 'deleted' | 'error'> {
    if (!existsSync(join(NETNS_DIR, id))) return 'deleted';
    return (await this.pids(id)).length > 0 ? 'running' : 'error';
  }

  /**
   * Like a cloud's terminate: everything in the namespace is killed at once (SIGKILL), as a
   * powered-off VM would be. A gentler SIGTERM would let slurmstepd report a running job as
   * failed (JobLaunchFailure), where a vanished instance lets Slurm requeue it.
   */
  async stop(id: string): Promise<void> {
    for (let i = 0; i < 50; i++) {
      const pids = await this.pids(id);
      if (pids.length === 0) break;
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    try {
      await ip(['link', 'del', vethName(id)]);
    } catch {
      // gone with the namespace, or never made
    }
    if (existsSync(join(NETNS_DIR, id))) {
      try {
        await ip(['netns', 'del', id]);
      } catch (err) {
        throw coordinatorErrors.siteFailed(this.name, 'stop', (err as Error).message);
      }
    }
    rmSync(join(this.c.runDir, id), { recursive: true, force: true });
    this.reserved.delete(id);
  }

  async list(prefix: string): Promise<string[]> {
    return this.namespaces().filter((n) => n.startsWith(prefix));
  }
}
