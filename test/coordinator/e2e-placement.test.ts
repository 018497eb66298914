// End to end with estuary's policy: a real Slurm cluster whose one home node is busy, two netns
// cloud sites at the same price, each with its own estuary gateway — a's holds 8 of the 10 MB of
// dataset x, b's 6 of the 9 MB of dataset y — and `estuary coordinator` as its own process. Jobs
// declare their dataset and read it through an `estuary mount` of their site's gateway, mounted
// by the drone's boot script. The coordinator sends the x jobs to a and the y jobs to b, pre-warms
// each gateway with what it lacks before the first job there starts, steers the jobs off the busy
// home node, explains each choice with the numbers, and the bytes that crossed each site's link
// (its gateway's own counter) are what the decision predicted, within 10 %.

import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, onTestFailed, onTestFinished } from 'vitest';
import { runProgram } from '../../coordinator/proc.ts';
import { onTeardown, runTeardowns } from '../helpers/cleanup.ts';
import { NODE, startChild, type Child } from '../helpers/process.ts';
import { startS3rver } from '../helpers/s3rver.ts';
import { fuseAvailable } from '../fuse/mount-helpers.ts';
import { metric } from './helpers/cloud-services.ts';
import { killNamespace, namespacesWith, startSlurmCluster, type SlurmCluster } from './helpers/slurm-cluster.ts';

afterAll(runTeardowns);

const BIN = new URL('../../bin/estuary.js', import.meta.url).pathname;
const prefix = `p${process.pid % 100000}-`;
const TOKEN = 'e2e-placement-admin-token';
const MB = 1e6;
/** Per site: the dataset its gateway partly holds, the file it holds, the file it lacks. */
const SITES = { a: { dataset: 'x', held: 8 * MB, missing: 2 * MB }, b: { dataset: 'y', held: 6 * MB, missing: 3 * MB } } as const;
const JOBS_PER_SITE = 2;
let cluster: SlurmCluster;
let configPath: string;
let mnt: string;
const gateways: Record<string, { url: string; child: Child }> = {};

async function waitFor<T>(what: string, f: () => Promise<T | undefined>, ms: number, everyMs = 250): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** A /24 no interface uses, for the second site's drones on the same bridge. */
async function freeSubnet(): Promise<string> {
  const used = (await runProgram('ip', ['-o', '-4', 'addr', 'show'])).stdout;
  for (let i = 0; i < 250; i++) {
    const base = `10.${200 + (i % 50)}.${(process.pid + i) % 250}.`;
    if (!used.includes(` ${base}`)) return base;
  }
  throw new Error('no free /24');
}

/** Body bytes a site's gateway has received from the store: what crossed its site's link. */
const received = (site: string) => metric(`${gateways[site]!.url}/metrics`, 'estuary_gateway_bytes_received_total');

async function admin(site: string, op: 'holdings' | 'prefetch', urls: string[]): Promise<Response> {
  return fetch(`${gateways[site]!.url}/estuary/v1/admin/${op}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ urls }),
  });
}
const held = async (site: string, url: string) => ((await (await admin(site, 'holdings', [url])).json()) as { holdings: { bytes: number }[] }).holdings[0]!.bytes;

/** A gateway on the bridge's address (the drones reach it there), caching the store's bucket. */
async function startGateway(site: string, store: string): Promise<void> {
  const child = startChild(NODE, [
    BIN, 'gateway', '--listen', `${cluster.gateway}:0`, '--log-format', 'json', '--cache-dir', join(cluster.dir, `gw-${site}`),
    '--s3', `kek=${store}`, '--s3-issuer-key-file', join(cluster.dir, 'issuer.key'), '--s3-credentials', join(cluster.dir, 'keys.json'),
    '--allow-dest', '@loopback', '--admin-token', TOKEN,
  ]);
  onTeardown(() => child.stop('SIGTERM', 5000).then(() => undefined));
  const port = (await child.waitFor(new RegExp(`"listen":"${cluster.gateway.replaceAll('.', '\\.')}:(\\d+)"`), 20_000))[1];
  gateways[site] = { url: `http://${cluster.gateway}:${port}`, child };
}

/** The drone's boot script: mount the bucket through its site's gateway, as user data would. */
function bootScript(site: string): string {
  const path = join(cluster.dir, `boot-${site}.sh`);
  writeFileSync(
    path,
    `#!/bin/sh
set -e
. ${join(cluster.dir, 'drone-credential.env')}
export AWS_REGION=us-east-1
"${NODE}" "${BIN}" mount kek ${mnt} --endpoint ${gateways[site]!.url} --cache-dir "$ESTUARY_DRONE_DIR/mount" \\
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
  return path;
}

beforeAll(async () => {
  cluster = await startSlurmCluster({ homeNodes: 1, homeCpus: 1, droneFeatures: ['estuary', 'site_a', 'site_b', 'type_small', 'cloud'], droneCpus: 2 });
  onTeardown(async () => {
    for (const ns of namespacesWith(prefix)) await killNamespace(ns);
  });
  // The second site's subnet on the cluster's bridge: its drones reach slurmctld through it.
  const bNet = await freeSubnet();
  const add = await runProgram('ip', ['addr', 'add', `${bNet}1/24`, 'dev', cluster.bridge]);
  if (add.code !== 0) throw new Error(add.stderr);
  onTeardown(async () => {
    await runProgram('ip', ['addr', 'del', `${bNet}1/24`, 'dev', cluster.bridge]);
  });

  const store = await startS3rver({ buckets: ['kek'] });
  const s3 = new S3Client({ endpoint: store.endpoint, region: store.region, forcePathStyle: true, credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey } });
  for (const { dataset, held: h, missing } of Object.values(SITES)) {
    await s3.send(new PutObjectCommand({ Bucket: 'kek', Key: `${dataset}/held.dat`, Body: Buffer.alloc(h, 1) }));
    await s3.send(new PutObjectCommand({ Bucket: 'kek', Key: `${dataset}/missing.dat`, Body: Buffer.alloc(missing, 2) }));
  }
  writeFileSync(join(cluster.dir, 'issuer.key'), 'issuer-key-0123456789abcdef0123456789abcdef');
  writeFileSync(join(cluster.dir, 'keys.json'), JSON.stringify({ default: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey, region: store.region } }));
  writeFileSync(join(cluster.dir, 'token'), TOKEN);
  for (const site of Object.keys(SITES)) await startGateway(site, store.endpoint);
  // Each site's cache already holds part of its dataset (an earlier run read it).
  for (const [site, { dataset, held: h }] of Object.entries(SITES)) {
    expect((await admin(site, 'prefetch', [`s3://kek/${dataset}/held.dat`])).status).toBe(200);
    expect(await held(site, `s3://kek/${dataset}`)).toBe(h);
  }
  const cred = await runProgram(NODE, [BIN, 'gateway', 'credentials', 'issue', '--prefix', 'kek/', '--ttl', '1h', '--issuer-key-file', join(cluster.dir, 'issuer.key'), '--format', 'env']);
  expect(cred.code, cred.stderr).toBe(0);
  writeFileSync(join(cluster.dir, 'drone-credential.env'), cred.stdout, { mode: 0o600 });
  mnt = join(cluster.dir, 'data');
  mkdirSync(mnt);

  const netns = (subnet: string, gateway: string, dir: string) =>
    `{bridge: ${cluster.bridge}, subnet: ${subnet}0/24, gateway: ${gateway}, slurm-conf: ${cluster.conf}, run-dir: ${cluster.dir}/${dir}, bandwidth: 1gbit, boot: ${bootScript(dir)}}`;
  const site = (name: string, subnet: string, gateway: string) => `    ${name}:
      adapter: netns
      quota: 2
      machine-types: [small]
      cost-per-core-hour: 0.04
      bandwidth: 1gbit
      gateway: {url: ${gateways[name]!.url}, token-file: ${join(cluster.dir, 'token')}}
      netns: ${netns(subnet, gateway, name)}
`;
  configPath = join(cluster.dir, 'coordinator.yaml');
  // A one-minute turnaround: a job waiting for the busy home node (free, but only in minutes)
  // would finish later than on a drone started now, so the work goes to the clouds.
  writeFileSync(
    configPath,
    `coordinator:
  listen: 127.0.0.1:0
  state-dir: ${cluster.dir}/coordinator
  interval: 1s
  idle-time: 4s
  boot-timeout: 30s
  prefix: ${prefix}
  batch-system: {type: slurm, partitions: [hybrid], slurm-conf: ${cluster.conf}}
  controller: {type: estuary, turnaround: 1m}
  storage:
    kek: {urls: ['s3://kek/'], egress-per-gb: 0.09}
  machine-types:
    small: {cores: 2, memory: 1000MiB, features: [cloud]}
  sites:
${site('a', cluster.subnet.replace(/0\/24$/, ''), cluster.gateway)}${site('b', bNet, `${bNet}1`)}`,
  );
}, 90_000);

interface Start {
  site: string;
  reason: { why: string; wanBytes: number; input: string; inputBytes: number; cachedBytes: number };
}

describe.runIf(fuseAvailable().ok)('estuary coordinator end to end with data-aware placement', () => {
  it('sends each dataset\'s jobs to the site whose gateway holds it, and its link carries what the decision predicted', async () => {
    const results = join(cluster.dir, 'results');
    mkdirSync(results, { recursive: true });
    // The home node is busy for the whole test.
    const blocker = await cluster.sbatch(['-c', '1', '--time=10', '-o', '/dev/null', '--wrap', 'sleep 300']);
    onTestFinished(async () => void (await cluster.slurm('scancel', [blocker])));
    await waitFor('the home node busy', async () => ((await cluster.slurm('squeue', ['-h', '-j', blocker, '-o', '%T'])).stdout.trim() === 'RUNNING' ? true : undefined), 20_000);

    const before = { a: await received('a'), b: await received('b') };
    const script = join(cluster.dir, 'job.sh');
    writeFileSync(script, `#!/bin/sh\nset -e\ndate +%s.%N > ${results}/$2.start\nbytes=$(cat ${mnt}/$1/* | wc -c)\nsleep 1\necho "$2 $(hostname) $bytes" > ${results}/$2\n`, { mode: 0o755 });
    const ids: string[] = [];
    for (const { dataset } of Object.values(SITES))
      for (let i = 0; i < JOBS_PER_SITE; i++)
        ids.push(await cluster.sbatch(['-c', '1', '--time=10', '-J', `reco-${dataset}`, '--comment', `estuary-inputs=s3://kek/${dataset}`, '-o', `${results}/slurm-%j.out`, script, dataset, `${dataset}${i}`]));
    // The coordinator starts once every job is queued, so its first decision sees all four: one
    // submitted after its first interval would find a's new drone and weigh that instead.
    const child = startChild(NODE, [BIN, 'coordinator', '--config', configPath, '--log-format', 'json'], { env: { ...process.env } });
    onTestFinished(() => child.stop('SIGTERM').then(() => undefined));
    onTestFailed(async () => {
      const q = await cluster.slurm('squeue', ['-o', '%i %T %r %N %f']);
      console.log(`coordinator output:\n${child.output().slice(-8000)}\nsqueue:\n${q.stdout}`);
      for (const site of Object.keys(SITES))
        for (const d of existsSync(join(cluster.dir, site)) ? readdirSync(join(cluster.dir, site), { withFileTypes: true }).filter((e) => e.isDirectory()) : [])
          console.log(`${d.name} mount.log:\n${readFileSync(join(cluster.dir, site, d.name, 'mount.log'), 'utf8').slice(-1500)}`);
    });
    const port = Number((await child.waitFor(/"port":(\d+)/, 20_000))[1]);
    const api = async <T>(path: string) => (await (await fetch(`http://127.0.0.1:${port}${path}`)).json()) as T;

    // When each site's cache holds its whole dataset: the pre-warm's end, seen from outside.
    const warmAt: Record<string, number> = {};
    await waitFor('both pre-warms', async () => {
      for (const [site, { dataset, held: h, missing }] of Object.entries(SITES))
        if (warmAt[site] === undefined && (await held(site, `s3://kek/${dataset}`)) === h + missing) warmAt[site] = Date.now() / 1000;
      return Object.keys(warmAt).length === 2 ? true : undefined;
    }, 30_000, 50);
    await waitFor('jobs done', async () => {
      const left = (await cluster.slurm('squeue', ['-h', '-o', '%i'])).stdout.split('\n').filter((l) => ids.includes(l.trim()));
      return left.length === 0 ? true : undefined;
    }, 45_000);

    // Each job ran on a drone of its dataset's site and read the whole dataset through the mount.
    for (const [site, { dataset, held: h, missing }] of Object.entries(SITES))
      for (let i = 0; i < JOBS_PER_SITE; i++) {
        const [, host, bytes] = readFileSync(join(results, `${dataset}${i}`), 'utf8').trim().split(' ');
        expect(host).toMatch(new RegExp(`^${prefix}${site}-`));
        expect(Number(bytes)).toBe(h + missing);
        expect(Number(readFileSync(join(results, `${dataset}${i}.start`), 'utf8'))).toBeGreaterThan(warmAt[site]! - 0.06);
      }
    // The decision at each site, from the log: what it predicted would cross the site's link.
    const starts = child.output().split('\n').filter((l) => l.includes('"msg":"starting drone"')).map((l) => JSON.parse(l) as Start);
    for (const [site, { dataset, held: h, missing }] of Object.entries(SITES)) {
      const first = starts.find((s) => s.site === site)!;
      expect(first.reason).toMatchObject({ input: `s3://kek/${dataset}`, inputBytes: h + missing, cachedBytes: h });
      expect(first.reason.why).toMatch(new RegExp(`^${JOBS_PER_SITE} pending jobs need s3://kek/${dataset} \\(${(h + missing) / MB} MB, ${h / MB} MB cached at ${site}\\): ${site} on-demand \\$0\\.08/h, 1 new drone; `));
      expect(first.reason.wanBytes).toBe(missing);
      const crossed = (await received(site)) - before[site as 'a' | 'b'];
      expect(Math.abs(crossed - first.reason.wanBytes) / first.reason.wanBytes, `${site}: ${crossed} bytes crossed, ${first.reason.wanBytes} predicted`).toBeLessThanOrEqual(0.1);
    }
    expect(starts.filter((s) => s.site === 'a')).toHaveLength(1);
    expect(starts.filter((s) => s.site === 'b')).toHaveLength(1);
    // Steered off the busy home node: the data is not there.
    const log = child.output();
    expect(log).toMatch(/"features":"site_a"/);
    expect(log).toMatch(/"features":"site_b"/);
    await waitFor('drones released', async () => ((await api<{ drones: unknown[] }>('/api/v1/drones')).drones.length === 0 ? true : undefined), 30_000);
    expect(namespacesWith(prefix)).toEqual([]);
  }, 120_000);
});
