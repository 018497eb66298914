// A late start against a real Slurm 22.05 cluster: a `command` site whose "cloud" makes the
// instance (a namespace on the bridge running slurmd, like the netns site's) as soon as it is
// asked, but answers 4 s later against a 1 s timeout. The coordinator must keep the drone as
// `unknown`, adopt it when the site shows it, run the jobs on it, never start a second one past
// the quota of 1, and leave nothing behind.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFailed, onTestFinished } from 'vitest';
import { NODE, startChild } from '../helpers/process.ts';
import { onTeardown } from '../helpers/cleanup.ts';
import { killNamespace, namespacesWith, startSlurmCluster, type SlurmCluster } from './helpers/slurm-cluster.ts';

const BIN = new URL('../../bin/estuary.js', import.meta.url).pathname;
const prefix = `l${process.pid % 100000}-`;
let cluster: SlurmCluster;
let configPath: string;

beforeAll(async () => {
  cluster = await startSlurmCluster({ homeNodes: 1, homeCpus: 1, droneFeatures: ['estuary', 'site_late', 'type_small', 'cloud'], droneCpus: 2 });
  onTeardown(async () => {
    for (const ns of namespacesWith(prefix)) await killNamespace(ns);
  });
  const base = cluster.gateway.replace(/\.1$/, '.');
  const script = (name: string, body: string) => {
    const path = join(cluster.dir, name);
    writeFileSync(path, `#!/bin/sh\nset -e\nID=$ESTUARY_DRONE_ID\nV=v$(printf %s "$ID" | md5sum | cut -c1-10)\n${body}\n`, { mode: 0o755 });
    return path;
  };
  // The cloud's side runs in a session of its own (setsid): killing the start script at its
  // timeout does not undo what the cloud already does, as with a real API.
  const start = script(
    'start.sh',
    `N=$(printf %s "$ID" | sed 's/.*-//')
setsid sh -c '
  ip netns add '"$ID"'
  ip link add '"$V"' type veth peer name '"$V"'p
  ip link set '"$V"'p netns '"$ID"'
  ip link set '"$V"' master ${cluster.bridge} up
  ip -n '"$ID"' addr add ${base}'"$((100 + N))"'/24 dev '"$V"'p
  ip -n '"$ID"' link set '"$V"'p up
  ip -n '"$ID"' link set lo up
  ip -n '"$ID"' route add default via ${cluster.gateway}
  SLURM_CONF=${cluster.conf} nsenter --net=/run/netns/'"$ID"' unshare --uts --mount --propagation private -- sh -c "hostname '"$ID"' && exec slurmd -D -Z -N '"$ID"' --conf \\"CPUs=$ESTUARY_DRONE_CORES RealMemory=$ESTUARY_DRONE_MEMORY_MB Feature=$ESTUARY_DRONE_FEATURES\\"" > ${cluster.dir}/'"$ID"'.out 2>&1 &
' < /dev/null > /dev/null 2>&1 &
sleep 4
echo ok`,
  );
  const status = script('status.sh', `if [ ! -e /run/netns/$ID ]; then echo deleted; elif [ -n "$(ip netns pids $ID)" ]; then echo running; else echo booting; fi`);
  const stop = script('stop.sh', `if [ -e /run/netns/$ID ]; then for p in $(ip netns pids $ID); do kill -9 $p || true; done; sleep 0.3; ip link del $V 2>/dev/null || true; ip netns del $ID; fi`);
  const list = script('list.sh', `ls /run/netns | grep "^$ESTUARY_PREFIX" || true`);
  configPath = join(cluster.dir, 'coordinator.yaml');
  writeFileSync(
    configPath,
    `coordinator:
  listen: 127.0.0.1:0
  state-dir: ${cluster.dir}/coordinator
  interval: 1s
  idle-time: 3s
  boot-timeout: 40s
  prefix: ${prefix}
  batch-system: {type: slurm, partitions: [hybrid], slurm-conf: ${cluster.conf}}
  machine-types:
    small: {cores: 2, memory: 1000MiB, features: [cloud]}
  sites:
    late:
      adapter: command
      quota: 1
      machine-types: [small]
      command: {start: ${start}, status: ${status}, stop: ${stop}, list: ${list}, timeout: 1s}
`,
  );
}, 60_000);

const waitFor = async <T>(what: string, f: () => Promise<T | undefined>, ms: number): Promise<T> => {
  const until = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
};

describe('a start that answers after its timeout, against Slurm 22.05', () => {
  it('is kept as unknown, adopted when the site shows it, runs the jobs, and no second instance is made', async () => {
    const child = startChild(NODE, [BIN, 'coordinator', '--config', configPath, '--log-format', 'json']);
    onTestFinished(() => child.stop('SIGTERM').then(() => undefined));
    onTestFailed(async () => {
      const q = await cluster.slurm('squeue', ['-o', '%i %T %r %N']);
      console.log(`coordinator output:\n${child.output().slice(-6000)}\nsqueue:\n${q.stdout}`);
    });
    const port = Number((await child.waitFor(/"port":(\d+)/, 20_000))[1]);
    const get = async <T>(path: string) => (await (await fetch(`http://127.0.0.1:${port}${path}`)).json()) as T;
    const results = join(cluster.dir, 'results');
    const ids = await Promise.all(
      [0, 1].map((i) => cluster.sbatch(['-c', '1', '--constraint=cloud', '-o', `${results}-${i}`, '--wrap', 'hostname; sleep 3'])),
    );
    let mostNamespaces = 0;
    await waitFor('jobs done', async () => {
      mostNamespaces = Math.max(mostNamespaces, namespacesWith(prefix).length);
      const r = await cluster.slurm('squeue', ['-h', '-o', '%i']);
      return ids.every((id) => !r.stdout.split('\n').map((l) => l.trim()).includes(id)) ? true : undefined;
    }, 60_000);
    const id = `${prefix}late-1`;
    for (const i of [0, 1]) expect(readFileSync(`${results}-${i}`, 'utf8').trim()).toBe(id);
    // The drone may take the jobs before the coordinator has seen the late instance: Slurm uses a
    // node once it registers. The registry adopts it within an interval or two.
    const path = await waitFor('drone adopted', async () => {
      const to = (await get<{ transitions: { to: string }[] }>(`/api/v1/drones/${id}`)).transitions.map((t) => t.to);
      return to.length >= 4 ? to : undefined;
    }, 20_000);
    expect(path.slice(0, 4)).toEqual(['requested', 'unknown', 'integrating', 'available']);
    expect(mostNamespaces).toBe(1);
    await waitFor('drone released', async () => ((await get<{ drones: unknown[] }>('/api/v1/drones')).drones.length === 0 ? true : undefined), 30_000);
    const all = await get<{ drones: { id: string }[] }>('/api/v1/drones?all=1');
    expect(all.drones.map((d) => d.id)).toEqual([id]);
    expect(namespacesWith(prefix)).toEqual([]);
    const nodes = await cluster.slurm('sinfo', ['-h', '-N', '-o', '%N']);
    expect(nodes.stdout.split('\n').filter((n) => n.startsWith(prefix))).toEqual([]);
    const ps = await cluster.slurm('ps', ['-eo', 'args']);
    expect(ps.stdout.split('\n').filter((l) => l.includes('slurmd') && l.includes(prefix))).toEqual([]);
  }, 120_000);
});
