// The emulated site↔cloud link: a network namespace (the "cloud") joined to the host (the "site")
// by a veth pair, with tbf shaping both directions to the profile's rate. Latency is added by the
// relay (relay.ts), which this file starts on loopback in front of the server in the namespace.
//
// Names carry the bench's PID so concurrent runs never collide; the addresses come from a /30 in
// 10.250.0.0/16 that is checked against every address already configured, and exist only on this
// veth pair. Every step registers its undo before the next one runs, so an interrupted set-up is
// taken apart as completely as a finished one.

import { spawnSync } from 'node:child_process';
import { registerCleanup } from '../cleanup.ts';
import { runCommand } from '../proc.ts';
import type { NetworkProfile } from '../network-profile.ts';

export interface EmulatedLink {
  readonly namespace: string;
  readonly hostAddress: string;
  readonly namespaceAddress: string;
  /** The command prefix that runs a program inside the namespace. */
  readonly execPrefix: readonly string[];
  readonly description: string;
  close(): Promise<void>;
}

async function ip(args: readonly string[]): Promise<void> {
  const r = await runCommand('ip', args, { timeoutMs: 10_000 });
  if (r.code !== 0) throw new Error(`ip ${args.join(' ')}: ${r.output.trim() || `exit ${r.code}`}`);
}

async function tc(args: readonly string[]): Promise<void> {
  const r = await runCommand('tc', args, { timeoutMs: 10_000 });
  if (r.code !== 0) throw new Error(`tc ${args.join(' ')}: ${r.output.trim() || `exit ${r.code}`}`);
}

/** A /30 in 10.250.0.0/16 not overlapping any address this host already has. */
export async function pickSubnet(seed: number): Promise<{ host: string; ns: string }> {
  const r = await runCommand('ip', ['-o', '-4', 'addr', 'show'], { timeoutMs: 10_000 });
  const used = r.output;
  for (let i = 0; i < 16384; i++) {
    const block = ((seed + i) % 16384) * 4;
    const prefix = `10.250.${block >> 8}.`;
    const low = block & 255;
    if (used.includes(`${prefix}${low + 1}/`) || used.includes(`${prefix}${low + 2}/`)) continue;
    return { host: `${prefix}${low + 1}`, ns: `${prefix}${low + 2}` };
  }
  throw new Error('no free /30 left in 10.250.0.0/16');
}

/**
 * tbf's bucket must hold at least one full GSO segment (64 KiB on veth) or such a packet can never
 * be sent; 5 ms of traffic at the rate keeps the shaper smooth at high rates without letting a
 * burst exceed the rate noticeably. 50 ms of queue is a moderate router buffer.
 */
export function tbfArgs(dev: string, bandwidthBps: number): string[] {
  const burst = Math.max(256 * 1024, Math.ceil((bandwidthBps / 8) * 0.005));
  return [
    'qdisc',
    'add',
    'dev',
    dev,
    'root',
    'tbf',
    'rate',
    `${bandwidthBps}bit`,
    'burst',
    `${burst}`,
    'latency',
    '50ms',
  ];
}

export async function createLink(profile: NetworkProfile, tag = process.pid): Promise<EmulatedLink> {
  const namespace = `estbench${tag}`;
  const hostIf = `eb${tag}h`.slice(0, 15);
  const nsIf = `eb${tag}n`.slice(0, 15);
  const undo: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const u of undo.splice(0).reverse()) await u().catch(() => undefined);
  };
  try {
    await ip(['netns', 'add', namespace]);
    undo.push(
      registerCleanup(
        `network namespace ${namespace}`,
        () => ip(['netns', 'del', namespace]),
        () => spawnSync('ip', ['netns', 'del', namespace], { stdio: 'ignore' }),
      ),
    );
    await ip(['link', 'add', hostIf, 'type', 'veth', 'peer', 'name', nsIf]);
    // Deleting either end removes the pair; moving one end into the namespace happens next.
    undo.push(
      registerCleanup(
        `veth ${hostIf}`,
        () => ip(['link', 'del', hostIf]).catch(() => undefined),
        () => spawnSync('ip', ['link', 'del', hostIf], { stdio: 'ignore' }),
      ),
    );
    await ip(['link', 'set', nsIf, 'netns', namespace]);
    const { host, ns } = await pickSubnet(tag);
    const inNs = ['ip', 'netns', 'exec', namespace];
    await ip(['addr', 'add', `${host}/30`, 'dev', hostIf]);
    await ip(['link', 'set', hostIf, 'up']);
    await ip(['netns', 'exec', namespace, 'ip', 'addr', 'add', `${ns}/30`, 'dev', nsIf]);
    await ip(['netns', 'exec', namespace, 'ip', 'link', 'set', nsIf, 'up']);
    await ip(['netns', 'exec', namespace, 'ip', 'link', 'set', 'lo', 'up']);
    if (profile.bandwidthBps !== undefined) {
      await tc(tbfArgs(hostIf, profile.bandwidthBps));
      const r = await runCommand(inNs[0]!, [...inNs.slice(1), 'tc', ...tbfArgs(nsIf, profile.bandwidthBps)]);
      if (r.code !== 0) throw new Error(`tc in ${namespace}: ${r.output.trim()}`);
    }
    return {
      namespace,
      hostAddress: host,
      namespaceAddress: ns,
      execPrefix: inNs,
      description: `namespace ${namespace}, veth ${hostIf}(${host}) ↔ ${nsIf}(${ns})`,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
