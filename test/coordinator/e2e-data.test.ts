// End to end with data, as a site would run it: a real Slurm cluster with two one-CPU home nodes,
// an s3rver bucket at home, and a netns cloud site (quota 3) behind an emulated link. Inside the
// cloud site run an estuary gateway serving the bucket (S3 endpoint, issued credentials) and an
// estuary agent that registers it with discovery over AMQP. Each drone's boot script asks discovery
// for its nearest cache and mounts the bucket through it with `estuary mount`, in the drone's own
// mount namespace; the home nodes use a mount of the bucket made directly. 40 jobs read an input from the bucket and write
// a result back through the same path. Every result must be right, some must have run in the
// cloud, the cloud's reads must have come through its gateway, and nothing may be left behind.

import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { runProgram } from '../../coordinator/proc.ts';
import { s3rverArgs } from '../../bench/backends/s3rver.ts';
import { isMounted } from '../../fuse/mount-table.ts';
import { onTeardown } from '../helpers/cleanup.ts';
import { NODE, startChild, type Child } from '../helpers/process.ts';
import { fuseAvailable } from '../fuse/mount-helpers.ts';
import { metric, serviceHost } from './helpers/cloud-services.ts';
import { killNamespace, namespacesWith, startSlurmCluster, type SlurmCluster, writeCoordinatorConfig } from './helpers/slurm-cluster.ts';

const BIN = new URL('../../bin/estuary.js', import.meta.url).pathname;
const id = process.pid % 100000;
const prefix = `d${id}-`;
const SVC = `v${id}svc`;
const BUCKET = 'kek';
const JOBS = 40;
const ISSUER = `issuer-key-${randomBytes(16).toString('hex')}`;

let cluster: SlurmCluster;
let s3: S3Client;
let dir: string;
let mnt: string;
let svcIp: string;
let configPath: string;
let gatewayChild: Child;
let discoveryPort: number;
const inputs: Buffer[] = [];

async function sh(cmd: string, args: readonly string[]): Promise<string> {
  const r = await runProgram(cmd, args, { timeoutMs: 30_000 });
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr.trim() || r.stdout.trim()}`);
  return r.stdout;
}

async function waitFor<T>(what: string, f: () => Promise<T | undefined>, ms: number): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

beforeAll(async () => {
  cluster = await startSlurmCluster({
    homeNodes: 2,
    homeCpus: 1,
    droneFeatures: ['estuary', 'site_cloud', 'type_small', 'cloud'],
    droneCpus: 2,
  });
  onTeardown(async () => {
    for (const ns of namespacesWith(prefix)) await killNamespace(ns);
  });
  dir = cluster.dir;
  const base = cluster.gateway.replace(/1$/, '');
  svcIp = `${base}250`;

  // The bucket at home, on the bridge address so the cloud site reaches it over its link.
  const store = startChild(NODE, s3rverArgs(join(dir, 's3'), cluster.gateway, [BUCKET]));
  onTeardown(() => store.stop('SIGTERM', 5000).then(() => undefined));
  const s3port = Number((await store.waitFor(/listening on [^\s]+:(\d+)/, 20_000))[1]);
  const s3url = `http://${cluster.gateway}:${s3port}`;
  s3 = new S3Client({ endpoint: s3url, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
  for (let i = 0; i < JOBS; i++) {
    inputs.push(randomBytes(200_000 + i * 1000));
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: `in/${i}`, Body: inputs[i] }));
  }

  // Discovery at home; the agent in the cloud reaches the broker with an account of its own
  // (RabbitMQ's guest may only connect from loopback).
  const amqpUser = `estuary-e2e-${id}`;
  const amqpPass = randomBytes(12).toString('hex');
  await sh('rabbitmqctl', ['add_user', amqpUser, amqpPass]);
  onTeardown(() => runProgram('rabbitmqctl', ['delete_user', amqpUser]).then(() => undefined));
  await sh('rabbitmqctl', ['set_permissions', '-p', '/', amqpUser, '.*', '.*', '.*']);
  const exchange = `estuary-e2e-${id}`;
  const hmac = 'cloud=cloud-secret-0123456789abcdef';
  const discovery = startChild(NODE, [
    BIN, 'discovery', '--listen', `${cluster.gateway}:0`, '--exchange', exchange, '--hmac-key', hmac,
    '--allow-host-addresses', '--no-verify', '--log-format', 'json',
  ]);
  onTeardown(() => discovery.stop('SIGTERM', 5000).then(() => undefined));
  discoveryPort = Number((await discovery.waitFor(/"url":"http:\/\/[^"]*:(\d+)"/, 20_000))[1]);

  // The cloud site's services: gateway (S3 endpoint for the bucket) and its agent.
  const svc = await serviceHost(cluster, SVC, svcIp, '200mbit');
  writeFileSync(join(dir, 'issuer.key'), ISSUER, { mode: 0o600 });
  writeFileSync(
    join(dir, 'store-keys.json'),
    JSON.stringify({ default: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', region: 'us-east-1' } }),
    { mode: 0o600 },
  );
  gatewayChild = svc.estuary([
    'gateway', '--listen', `${svcIp}:8080`, '--s3', `${BUCKET}=${s3url}`, '--s3-issuer-key-file', join(dir, 'issuer.key'),
    '--s3-credentials', join(dir, 'store-keys.json'), '--cache-dir', join(dir, 'gw-cache'), '--allow-dest', `${cluster.gateway}`,
  ]);
  await gatewayChild.waitFor(/"listen":"/, 20_000);
  svc.estuary(
    ['agent', '--cache-url', `http://${svcIp}:8080`, '--site', 'cloud', '--public-ip', svcIp, '--interface', 'eth0', '--interval', '2s', '--hostname', 'gw.cloud'],
    { ESTUARY_AMQP: `amqp://${amqpUser}:${amqpPass}@${cluster.gateway}:5672`, ESTUARY_AGENT_EXCHANGE: exchange, ESTUARY_AGENT_HMAC_KEY: hmac },
  );

  // Home nodes read and write the bucket through a mount made directly to the store.
  mnt = join(dir, 'data');
  mkdirSync(mnt);
  const home = startChild(NODE, [BIN, 'mount', BUCKET, mnt, '--endpoint', s3url, '--cache-dir', join(dir, 'home-mount'), '--log-format', 'json'], {
    env: { ...process.env, AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_REGION: 'us-east-1' },
  });
  onTeardown(async () => {
    if (await isMounted(mnt)) await runProgram('sh', ['-c', `fusermount -uz '${mnt}' || umount -l '${mnt}'`]);
    await home.stop('SIGKILL');
  });
  await home.waitFor(/"msg":"mounted /, 30_000);
  mkdirSync(join(mnt, 'out'));

  // Drones mount the same path through the cloud gateway with a credential it issued, as user
  // data would on a cloud image: the mount lives in the drone's mount namespace and dies with it.
  const cred = await runProgram(NODE, [BIN, 'gateway', 'credentials', 'issue', '--prefix', `${BUCKET}/`, '--write', '--ttl', '1h', '--issuer-key-file', join(dir, 'issuer.key'), '--format', 'env']);
  expect(cred.code, cred.stderr).toBe(0);
  writeFileSync(join(dir, 'drone-credential.env'), cred.stdout, { mode: 0o600 });
  const boot = join(dir, 'boot.sh');
  writeFileSync(
    boot,
    `#!/bin/sh
set -e
. ${join(dir, 'drone-credential.env')}
# The instance's mount namespace began as a copy of the host's: drop the home mount there first.
umount -l ${mnt} 2>/dev/null || true
export AWS_REGION=us-east-1
# The nearest cache, as a worker node finds it: ask discovery (the first proxy it offers).
gw=$("${NODE}" "${BIN}" discover --server http://${cluster.gateway}:${discoveryPort} --upstream any --no-test --log-level error | sed 's/[;|].*//')
echo "nearest cache: $gw" > "$ESTUARY_DRONE_DIR/mount.log"
case "$gw" in http://*) ;; *) echo "discovery offered no cache" >&2; exit 1 ;; esac
"${NODE}" "${BIN}" mount ${BUCKET} ${mnt} --endpoint "$gw" --cache-dir "$ESTUARY_DRONE_DIR/mount" \\
  --log-format json >> "$ESTUARY_DRONE_DIR/mount.log" 2>&1 &
for i in $(seq 1 100); do
  grep -q '"msg":"mounted ' "$ESTUARY_DRONE_DIR/mount.log" && exit 0
  sleep 0.2
done
echo "the bucket did not mount within 20 s" >&2
exit 1
`,
    { mode: 0o755 },
  );
  configPath = writeCoordinatorConfig(cluster, { prefix, quota: 3, bootTimeout: '40s', boot });
}, 120_000);

async function gatewayMetric(name: string): Promise<number> {
  return metric(`http://${svcIp}:8080/metrics`, name);
}

function startCoordinator(): { child: Child; port: Promise<number> } {
  const child = startChild(NODE, [BIN, 'coordinator', '--config', configPath, '--log-format', 'json']);
  onTeardown(() => child.stop('SIGTERM', 20_000).then(() => undefined));
  onTestFailed(async () => {
    const q = await cluster.slurm('squeue', ['-o', '%i %T %r %N']);
    console.log(`coordinator:\n${child.output().slice(-5000)}\nsqueue:\n${q.stdout}\ngateway:\n${gatewayChild.output().slice(-3000)}`);
    const drones = join(dir, 'drones');
    for (const d of existsSync(drones) ? readdirSync(drones) : [])
      for (const f of ['slurmd.out', 'mount.log'])
        if (existsSync(join(drones, d, f))) console.log(`${d} ${f}:\n${readFileSync(join(drones, d, f), 'utf8').slice(-2000)}`);
  });
  return { child, port: child.waitFor(/"port":(\d+)/, 20_000).then((m) => Number(m[1])) };
}

async function api<T>(port: number, path: string): Promise<T> {
  return (await fetch(`http://127.0.0.1:${port}${path}`)).json() as Promise<T>;
}

/** Submits the 40 jobs (outputs under out/TAG/), optionally kills -9 and restarts the coordinator mid-burst. */
async function burst(tag: string, killMidway: boolean): Promise<void> {
  let coord = startCoordinator();
  let port = await coord.port;
  const out = join(mnt, 'out', tag);
  mkdirSync(out);
  const script = join(dir, `job-${tag}.sh`);
  writeFileSync(
    script,
    `#!/bin/sh
set -e
sum=$(sha256sum < ${mnt}/in/$1 | cut -c1-64)
sleep 2
printf '%s %s %s\\n' "$1" "$(hostname)" "$sum" > ${out}/$1
`,
    { mode: 0o755 },
  );
  const before = await gatewayMetric('estuary_gateway_bytes_received_total');
  const ids = await Promise.all(
    Array.from({ length: JOBS }, (_, i) => cluster.sbatch(['-c', '1', '-o', join(dir, `slurm-${tag}-${i}.out`), script, String(i)])),
  );
  if (killMidway) {
    // Once a drone runs jobs, the coordinator dies without a word; a new one adopts the drones.
    const adopted = await waitFor('a drone available', async () => {
      const r = await api<{ drones: { id: string; state: string }[] }>(port, '/api/v1/drones');
      const up = r.drones.filter((d) => d.state === 'available');
      return up.length > 0 ? r.drones.map((d) => d.id).sort() : undefined;
    }, 90_000);
    coord.child.proc.kill('SIGKILL');
    await coord.child.exited;
    coord = startCoordinator();
    port = await coord.port;
    const now = (await api<{ drones: { id: string }[] }>(port, '/api/v1/drones')).drones.map((d) => d.id).sort();
    for (const id of adopted) expect(now).toContain(id);
    await coord.child.waitFor(/"adopted":\d+,"orphans":0/, 20_000);
  }
  await waitFor('every job to finish', async () => {
    const r = await cluster.slurm('squeue', ['-h', '-o', '%i']);
    const live = new Set(r.stdout.split('\n').map((l) => l.trim()));
    return ids.some((j) => live.has(j)) ? undefined : true;
  }, 240_000);

  const hosts: string[] = [];
  for (let i = 0; i < JOBS; i++) {
    const got = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: `out/${tag}/${i}` }));
    const [n, host, sum] = (await got.Body!.transformToString()).trim().split(' ');
    expect(n).toBe(String(i));
    expect(sum).toBe(createHash('sha256').update(inputs[i]!).digest('hex'));
    hosts.push(host!);
  }
  const cloud = hosts.filter((h) => h.startsWith(prefix));
  expect(cloud.length, hosts.join(' ')).toBeGreaterThan(0);
  expect(hosts.filter((h) => cluster.homeNodes.includes(h)).length).toBeGreaterThan(0);
  // The cloud jobs' reads and writes went through the cloud's gateway, not around it (the
  // second burst reads inputs the gateway may already hold, so only its outputs must show).
  expect(await gatewayMetric('estuary_gateway_bytes_received_total')).toBeGreaterThan(before);

  const timeline = await fetch(`http://127.0.0.1:${port}/timeline.svg`).then((r) => r.text());
  expect(timeline).toMatch(/<svg/);
  if (process.env.ESTUARY_E2E_TIMELINE) writeFileSync(`${process.env.ESTUARY_E2E_TIMELINE}-${tag}.svg`, timeline);

  // Drones go after the idle time; with them their namespaces, slurmd, mounts and directories.
  await waitFor('drones released', async () => {
    const r = await api<{ drones: unknown[] }>(port, '/api/v1/drones');
    return r.drones.length === 0 ? true : undefined;
  }, 60_000);
  expect(namespacesWith(prefix)).toEqual([]);
  const nodes = await cluster.slurm('sinfo', ['-h', '-N', '-o', '%N']);
  expect(nodes.stdout.split('\n').filter((n) => n.startsWith(prefix))).toEqual([]);
  const ps = await runProgram('ps', ['-eo', 'args']);
  expect(ps.stdout.split('\n').filter((l) => (l.includes('slurmd') || l.includes(' mount ')) && l.includes(prefix))).toEqual([]);
  expect(readdirSync(join(dir, 'drones'))).toEqual([]);
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter((l) => l.includes(mnt));
  expect(mounts.length).toBe(1); // the home mount only
  expect(await coord.child.stop('SIGTERM', 20_000)).toBe(0);
}

describe.runIf(fuseAvailable().ok)('estuary coordinator end to end with data (gateway, agent, discovery, mounts)', () => {
  it('registers the cloud gateway with discovery through its agent', async () => {
    await waitFor('the cloud gateway in discovery', async () => {
      const r = await fetch(`http://${cluster.gateway}:${discoveryPort}/api/v1/caches`).then((x) => x.text());
      return r.includes(svcIp) ? true : undefined;
    }, 30_000);
  });

  it('40 jobs read their input from the bucket and write results back, at home and in the cloud; nothing is left', async () => {
    await burst('plain', false);
  }, 360_000);

  it('the same with the coordinator killed -9 mid-burst and restarted: it adopts its drones and finishes', async () => {
    await burst('killed', true);
  }, 360_000);
});
