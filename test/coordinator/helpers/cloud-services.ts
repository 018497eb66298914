// A cloud site's own services for the end to end tests: a network namespace on the cluster's
// bridge (the site's service host) whose link to home is shaped like a WAN, and estuary commands
// run inside it (a gateway, its agent). Torn down after the test file, also when a test fails.

import { runProgram } from '../../../coordinator/proc.ts';
import { onTeardown } from '../../helpers/cleanup.ts';
import { NODE, startChild, type Child } from '../../helpers/process.ts';
import { killNamespace, type SlurmCluster } from './slurm-cluster.ts';

const BIN = new URL('../../../bin/estuary.js', import.meta.url).pathname;

async function sh(cmd: string, args: readonly string[]): Promise<void> {
  const r = await runProgram(cmd, args, { timeoutMs: 30_000 });
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr.trim() || r.stdout.trim()}`);
}

export interface ServiceHost {
  readonly name: string;
  readonly ip: string;
  /** Runs `estuary ARGS` inside the namespace (stopped after the test file). */
  estuary(args: readonly string[], env?: NodeJS.ProcessEnv): Child;
}

/** A namespace `name` at `ip` on the cluster's bridge, its link shaped to `rate` both ways. */
export async function serviceHost(cluster: SlurmCluster, name: string, ip: string, rate: string): Promise<ServiceHost> {
  const veth = `vs${name}`.replace(/[^A-Za-z0-9]/g, '').slice(0, 13);
  await sh('ip', ['netns', 'add', name]);
  onTeardown(async () => {
    await killNamespace(name);
    await runProgram('ip', ['link', 'del', veth]);
  });
  await sh('ip', ['link', 'add', veth, 'type', 'veth', 'peer', 'name', `${veth}p`]);
  await sh('ip', ['link', 'set', `${veth}p`, 'netns', name]);
  await sh('ip', ['-n', name, 'link', 'set', `${veth}p`, 'name', 'eth0']);
  await sh('ip', ['link', 'set', veth, 'master', cluster.bridge, 'up']);
  await sh('ip', ['-n', name, 'addr', 'add', `${ip}/24`, 'dev', 'eth0']);
  await sh('ip', ['-n', name, 'link', 'set', 'eth0', 'up']);
  await sh('ip', ['-n', name, 'link', 'set', 'lo', 'up']);
  const tbf = ['root', 'tbf', 'rate', rate, 'burst', '256kb', 'latency', '50ms'];
  await sh('tc', ['qdisc', 'add', 'dev', veth, ...tbf]);
  await sh('tc', ['-n', name, 'qdisc', 'add', 'dev', 'eth0', ...tbf]);
  return {
    name,
    ip,
    estuary(args, env = {}) {
      const child = startChild('nsenter', [`--net=/run/netns/${name}`, NODE, BIN, ...args, '--log-format', 'json'], {
        env: { ...process.env, ...env },
      });
      onTeardown(() => child.stop('SIGTERM', 5000).then(() => undefined));
      return child;
    },
  };
}

/** The sum of a Prometheus counter's series on `url` (/metrics). */
export async function metric(url: string, name: string): Promise<number> {
  const text = await fetch(url).then((r) => r.text());
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) sum += Number(line.split(' ').pop());
  return sum;
}
