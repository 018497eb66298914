// A private Slurm 22.05 cluster for one test file, on this host: its own munged (socket in the
// test's directory), its own slurm.conf, ports and state directories, a bridge the drones join,
// and slurmctld in its own UTS + mount namespace whose host name resolves to the bridge address
// only, so it listens there and nowhere else (docs/COORDINATOR.md, "Running Slurm here"). Home
// nodes are static nodes, each a namespace on the bridge running slurmd. Everything is torn down
// after the file, also when a test fails or start-up breaks half-way.

import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProgram } from '../../../coordinator/proc.ts';
import { onTeardown } from '../../helpers/cleanup.ts';
import { startChild, type Child } from '../../helpers/process.ts';

export interface SlurmCluster {
  readonly dir: string;
  readonly conf: string;
  readonly env: NodeJS.ProcessEnv;
  readonly bridge: string;
  readonly gateway: string;
  readonly subnet: string;
  readonly partition: string;
  readonly homeNodes: readonly string[];
  /** Runs a Slurm client command against this cluster. */
  slurm(program: string, args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  /** kill -9 of slurmctld (its saved state stays), as a crash of the controller. */
  killController(): Promise<void>;
  /** Starts slurmctld again on its saved state; resolves once it is the primary controller. */
  startController(): Promise<void>;
  /** Submits a batch script; returns the job id. */
  sbatch(args: readonly string[]): Promise<string>;
  stop(): Promise<void>;
}

async function sh(file: string, args: readonly string[]): Promise<string> {
  const r = await runProgram(file, args, { timeoutMs: 15_000 });
  if (r.code !== 0) throw new Error(`${file} ${args.join(' ')}: ${r.stderr.trim() || r.stdout.trim()}`);
  return r.stdout;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** A /24 in 10.64–127.x.0 that no interface of this host uses. */
async function freeSubnet(): Promise<string> {
  const used = await sh('ip', ['-o', '-4', 'addr', 'show']);
  for (let i = 0; i < 4096; i++) {
    const n = (process.pid + i) % 4096;
    const base = `10.${64 + (n >> 6)}.${(n & 63) + 100}.`;
    if (!used.includes(` ${base}`)) return base;
  }
  throw new Error('no free /24 for the test bridge');
}

export async function killNamespace(ns: string): Promise<void> {
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    const r = await runProgram('ip', ['netns', 'pids', ns]);
    const pids = r.stdout.split('\n').filter(Boolean).map(Number);
    if (pids.length === 0) break;
    for (const pid of pids)
      try {
        process.kill(pid, signal);
      } catch {
        // gone
      }
    await new Promise((r) => setTimeout(r, 500));
  }
  await runProgram('ip', ['netns', 'del', ns]);
}

export interface ClusterOptions {
  readonly homeNodes?: number;
  readonly homeCpus?: number;
  /** Features of the drones to come, carried by a FUTURE placeholder so jobs asking them queue. */
  readonly droneFeatures: readonly string[];
  readonly droneCpus: number;
  /** More slurm.conf lines (a job completion log, say), after the defaults. */
  readonly extraConf?: readonly string[];
}

let started = 0;

export async function startSlurmCluster(o: ClusterOptions): Promise<SlurmCluster> {
  // Unique per process and per call: names of bridges, namespaces and hosts never collide.
  const id = `${process.pid % 100000}${String.fromCharCode(97 + (started++ % 26))}`;
  const dir = join(tmpdir(), `estuary-slurm-${id}-${randomBytes(3).toString('hex')}`);
  const undo: (() => Promise<void> | void)[] = [];
  const stop = async () => {
    while (undo.length) {
      try {
        await undo.pop()!();
      } catch {
        // keep tearing down
      }
    }
  };
  onTeardown(stop);
  try {
    for (const d of ['mkey', 'mrun', 'state', 'spool', 'log', 'run', 'out']) mkdirSync(join(dir, d), { recursive: true });
    undo.push(() => rmSync(dir, { recursive: true, force: true }));
    chmodSync(join(dir, 'mkey'), 0o700);
    chmodSync(join(dir, 'mrun'), 0o755);
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, 'mkey', 'munge.key'), randomBytes(1024), { mode: 0o400 });
    const socket = join(dir, 'mrun', 'munge.socket');
    const munged: Child = startChild('munged', [
      '-F', '-f', `-S${socket}`, `--key-file=${join(dir, 'mkey', 'munge.key')}`, `--log-file=${join(dir, 'log', 'munged.log')}`,
      `--pid-file=${join(dir, 'mrun', 'munged.pid')}`, `--seed-file=${join(dir, 'mkey', 'seed')}`,
    ]);
    undo.push(() => munged.stop('SIGTERM', 3000).then(() => undefined));
    await munged.waitFor(/Created \d+ work threads/, 10_000);

    const base = await freeSubnet();
    const gateway = `${base}1`;
    const bridge = `esb${id}`.slice(0, 15);
    await sh('ip', ['link', 'add', bridge, 'type', 'bridge']);
    undo.push(() => sh('ip', ['link', 'del', bridge]).then(() => undefined));
    await sh('ip', ['addr', 'add', `${gateway}/24`, 'dev', bridge]);
    await sh('ip', ['link', 'set', bridge, 'up']);

    const ctlName = `ctl${id}`;
    const [ctlPort, dPort] = [await freePort(), await freePort()];
    const homeNodes = Array.from({ length: o.homeNodes ?? 2 }, (_, i) => `home${id}-${i + 1}`);
    const homeCpus = o.homeCpus ?? 2;
    const conf = join(dir, 'slurm.conf');
    writeFileSync(join(dir, 'hosts'), `127.0.0.1 localhost\n${gateway} ${ctlName}\n`);
    writeFileSync(
      conf,
      [
        `ClusterName=est${id}`,
        `SlurmctldHost=${ctlName}(${gateway})`,
        `SlurmctldPort=${ctlPort}`,
        `SlurmdPort=${dPort}`,
        'SlurmUser=root',
        'SlurmdUser=root',
        'AuthType=auth/munge',
        `AuthInfo=socket=${socket}`,
        'CredType=cred/munge',
        `StateSaveLocation=${join(dir, 'state')}`,
        `SlurmdSpoolDir=${join(dir, 'spool')}/%n`,
        `SlurmdPidFile=${join(dir, 'run')}/slurmd-%n.pid`,
        `SlurmdLogFile=${join(dir, 'log')}/slurmd-%n.log`,
        `SlurmctldPidFile=${join(dir, 'run', 'slurmctld.pid')}`,
        `SlurmctldLogFile=${join(dir, 'log', 'slurmctld.log')}`,
        'CommunicationParameters=NoCtldInAddrAny',
        'MaxNodeCount=64',
        'SelectType=select/cons_tres',
        'SelectTypeParameters=CR_Core_Memory',
        'DefMemPerCPU=100',
        'ProctrackType=proctrack/linuxproc',
        'TaskPlugin=task/none',
        'ReturnToService=2',
        'MpiDefault=none',
        'JobAcctGatherType=jobacct_gather/none',
        'AccountingStorageType=accounting_storage/none',
        'SchedulerParameters=bf_interval=1',
        'SlurmdTimeout=10',
        'KillWait=2',
        ...(o.extraConf ?? []).map((l) => l.replaceAll('{dir}', dir)),
        ...homeNodes.map((n, i) => `NodeName=${n} NodeAddr=${base}${i + 2} CPUs=${homeCpus} RealMemory=1000 Feature=home State=UNKNOWN`),
        `NodeName=placeholder${id} CPUs=${o.droneCpus} RealMemory=1000 Feature=${o.droneFeatures.join(',')} State=FUTURE`,
        'PartitionName=hybrid Nodes=ALL Default=YES MaxTime=INFINITE State=UP',
        '',
      ].join('\n'),
    );
    const controller = { child: undefined as Child | undefined };
    const startController = async () => {
      const child = startChild('unshare', [
        '--uts', '--mount', '--', 'sh', '-c',
        `hostname ${ctlName} && mount --bind ${join(dir, 'hosts')} /etc/hosts && exec slurmctld -D -f ${conf}`,
      ]);
      controller.child = child;
      await child.waitFor(/Running as primary controller/, 15_000);
    };
    undo.push(() => controller.child?.stop('SIGTERM', 5000).then(() => undefined));
    await startController();
    const env = { ...process.env, SLURM_CONF: conf };
    const slurm = (program: string, args: readonly string[]) => runProgram(program, args, { env, timeoutMs: 15_000 });

    for (const [i, name] of homeNodes.entries()) {
      const veth = `esh${id}${i}`.slice(0, 15);
      await sh('ip', ['netns', 'add', name]);
      undo.push(() => killNamespace(name));
      await sh('ip', ['link', 'add', veth, 'type', 'veth', 'peer', 'name', `${veth}p`]);
      undo.push(() => runProgram('ip', ['link', 'del', veth]).then(() => undefined));
      await sh('ip', ['link', 'set', `${veth}p`, 'netns', name]);
      await sh('ip', ['link', 'set', veth, 'master', bridge, 'up']);
      await sh('ip', ['-n', name, 'addr', 'add', `${base}${i + 2}/24`, 'dev', `${veth}p`]);
      await sh('ip', ['-n', name, 'link', 'set', `${veth}p`, 'up']);
      await sh('ip', ['-n', name, 'link', 'set', 'lo', 'up']);
      startChild('nsenter', [`--net=/run/netns/${name}`, 'unshare', '--uts', '--', 'sh', '-c', `hostname ${name} && exec slurmd -D -N ${name}`], {
        env,
      });
    }
    for (let i = 0; i < 100; i++) {
      const r = await slurm('sinfo', ['-h', '-N', '-o', '%N %t']);
      const idle = r.stdout.split('\n').filter((l) => homeNodes.some((n) => l.startsWith(`${n} `)) && / idle$/.test(l));
      if (idle.length === homeNodes.length) break;
      if (i === 99) throw new Error(`home nodes did not come up: ${r.stdout}${r.stderr}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    return {
      dir,
      conf,
      env,
      bridge,
      gateway,
      subnet: `${base}0/24`,
      partition: 'hybrid',
      homeNodes,
      slurm,
      async killController() {
        const child = controller.child;
        controller.child = undefined;
        child?.proc.kill('SIGKILL');
        await child?.exited;
      },
      startController,
      async sbatch(args) {
        const r = await slurm('sbatch', ['--parsable', ...args]);
        if (r.code !== 0) throw new Error(`sbatch: ${r.stderr}`);
        return r.stdout.trim().split(';')[0]!;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Namespaces whose name starts with `prefix` (what a test must find none of at the end). */
export function namespacesWith(prefix: string): string[] {
  if (!existsSync('/run/netns')) return [];
  return readdirSync('/run/netns').filter((n) => n.startsWith(prefix));
}

/**
 * Writes a coordinator config for this cluster with one netns cloud site of 2-core drones (1 s
 * interval, 4 s idle time, as the end to end tests want them); returns its path. Drones the
 * coordinator leaves running (a coordinator's stop never stops its drones) are killed at teardown,
 * before the cluster goes: teardowns run in reverse.
 */
export function writeCoordinatorConfig(
  cluster: SlurmCluster,
  o: { prefix: string; quota: number; bootTimeout: string; boot?: string },
): string {
  onTeardown(async () => {
    for (const ns of namespacesWith(o.prefix)) await killNamespace(ns);
  });
  const path = join(cluster.dir, 'coordinator.yaml');
  const boot = o.boot ? `, boot: ${o.boot}` : '';
  writeFileSync(
    path,
    `coordinator:
  listen: 127.0.0.1:0
  state-dir: ${cluster.dir}/coordinator
  interval: 1s
  idle-time: 4s
  boot-timeout: ${o.bootTimeout}
  prefix: ${o.prefix}
  batch-system: {type: slurm, partitions: [hybrid], slurm-conf: ${cluster.conf}}
  machine-types:
    small: {cores: 2, memory: 1000MiB, features: [cloud]}
  sites:
    cloud:
      adapter: netns
      quota: ${o.quota}
      machine-types: [small]
      cost-per-core-hour: 0.04
      netns: {bridge: ${cluster.bridge}, subnet: ${cluster.subnet}, gateway: ${cluster.gateway}, slurm-conf: ${cluster.conf}, run-dir: ${cluster.dir}/drones, bandwidth: 1gbit${boot}}
`,
  );
  return path;
}
