// End to end with estuary's policy: a real Slurm cluster with one home node, two netns cloud sites
// at the same price — `far` on a fast link with no cache, `near` behind a slower link whose
// estuary gateway already holds 4 of the jobs' 5 MB of input — and `estuary coordinator` as its
// own process. The jobs declare their input; the coordinator sends them to `near`, asks its
// gateway to fetch the missing megabyte before the first drone job starts, steers the jobs there
// with site_near, explains the choice with the numbers, and leaves nothing behind.

import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it, onTestFailed, onTestFinished } from 'vitest';
import { runProgram } from '../../coordinator/proc.ts';
import { onTeardown } from '../helpers/cleanup.ts';
import { NODE, startChild } from '../helpers/process.ts';
import { startS3rver } from '../helpers/s3rver.ts';
import { startGatewayProcess } from '../gateway/helpers/gateway.ts';
import { killNamespace, namespacesWith, startSlurmCluster, type SlurmCluster } from './helpers/slurm-cluster.ts';

const BIN = new URL('../../bin/estuary.js', import.meta.url).pathname;
const prefix = `p${process.pid % 100000}-`;
const TOKEN = 'e2e-placement-admin-token';
const MB = 1e6;
let cluster: SlurmCluster;
let configPath: string;
let gatewayUrl: string;

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

/** Body bytes the gateway has received from the store: what crossed its site's link. */
async function received(): Promise<number> {
  const text = await (await fetch(`${gatewayUrl}/metrics`)).text();
  return [...text.matchAll(/^estuary_gateway_bytes_received_total(?:\{[^}]*\})? (\d+(?:\.\d+)?(?:e\+\d+)?)$/gm)].reduce((s, m) => s + Number(m[1]), 0);
}

async function held(url: string): Promise<number> {
  const r = await fetch(`${gatewayUrl}/estuary/v1/admin/holdings`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ urls: [url] }),
  });
  return ((await r.json()) as { holdings: { bytes: number }[] }).holdings[0]!.bytes;
}

beforeAll(async () => {
  cluster = await startSlurmCluster({ homeNodes: 1, homeCpus: 1, droneFeatures: ['estuary', 'site_near', 'site_far', 'type_small', 'cloud'], droneCpus: 2 });
  onTeardown(async () => {
    for (const ns of namespacesWith(prefix)) await killNamespace(ns);
  });
  // The second site's subnet on the cluster's bridge: its drones reach slurmctld through it.
  const near = await freeSubnet();
  const add = await runProgram('ip', ['addr', 'add', `${near}1/24`, 'dev', cluster.bridge]);
  if (add.code !== 0) throw new Error(add.stderr);
  onTeardown(async () => {
    await runProgram('ip', ['addr', 'del', `${near}1/24`, 'dev', cluster.bridge]);
  });

  const store = await startS3rver({ buckets: ['kek'] });
  const s3 = new S3Client({ endpoint: store.endpoint, region: store.region, forcePathStyle: true, credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey } });
  await s3.send(new PutObjectCommand({ Bucket: 'kek', Key: 'run42/a.dat', Body: Buffer.alloc(4 * MB, 1) }));
  await s3.send(new PutObjectCommand({ Bucket: 'kek', Key: 'run42/b.dat', Body: Buffer.alloc(1 * MB, 2) }));
  writeFileSync(join(cluster.dir, 'issuer.key'), 'issuer-key-0123456789abcdef0123456789abcdef');
  writeFileSync(join(cluster.dir, 'keys.json'), JSON.stringify({ default: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey, region: store.region } }));
  writeFileSync(join(cluster.dir, 'token'), TOKEN);
  const gw = await startGatewayProcess([
    '--s3', `kek=${store.endpoint}`,
    '--s3-issuer-key-file', join(cluster.dir, 'issuer.key'),
    '--s3-credentials', join(cluster.dir, 'keys.json'),
    '--allow-dest', '@loopback',
    '--admin-token', TOKEN,
  ]);
  gatewayUrl = gw.url;
  // The near site's cache already holds 4 of the 5 MB (an earlier run read them).
  const warm = await fetch(`${gw.url}/estuary/v1/admin/prefetch`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ urls: ['s3://kek/run42/a.dat'] }),
  });
  expect(warm.status).toBe(200);
  expect(await held('s3://kek/run42')).toBe(4 * MB);

  const netns = (subnet: string, gateway: string, bandwidth: string, dir: string) =>
    `{bridge: ${cluster.bridge}, subnet: ${subnet}0/24, gateway: ${gateway}, slurm-conf: ${cluster.conf}, run-dir: ${cluster.dir}/${dir}, bandwidth: ${bandwidth}}`;
  configPath = join(cluster.dir, 'coordinator.yaml');
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
  controller: {type: estuary}
  storage:
    kek: {urls: ['s3://kek/'], egress-per-gb: 0.09}
  machine-types:
    small: {cores: 2, memory: 1000MiB, features: [cloud]}
  sites:
    far:
      adapter: netns
      quota: 2
      machine-types: [small]
      cost-per-core-hour: 0.04
      bandwidth: 1gbit
      netns: ${netns(cluster.subnet.replace(/0\/24$/, ''), cluster.gateway, '1gbit', 'far')}
    near:
      adapter: netns
      quota: 4
      machine-types: [small]
      cost-per-core-hour: 0.04
      bandwidth: 100mbit
      gateway: {url: ${gw.url}, token-file: ${join(cluster.dir, 'token')}}
      netns: ${netns(near, `${near}1`, '100mbit', 'near')}
`,
  );
}, 90_000);

describe('estuary coordinator end to end with data-aware placement', () => {
  it('sends the jobs to the site whose cache holds their input, pre-warmed before the first job', async () => {
    const child = startChild(NODE, [BIN, 'coordinator', '--config', configPath, '--log-format', 'json'], { env: { ...process.env } });
    onTestFinished(() => child.stop('SIGTERM').then(() => undefined));
    onTestFailed(async () => {
      const q = await cluster.slurm('squeue', ['-o', '%i %T %r %N %f']);
      console.log(`coordinator output:\n${child.output().slice(-8000)}\nsqueue:\n${q.stdout}`);
    });
    const port = Number((await child.waitFor(/"port":(\d+)/, 20_000))[1]);
    const api = async <T>(path: string) => (await (await fetch(`http://127.0.0.1:${port}${path}`)).json()) as T;

    const before = await received();
    const results = join(cluster.dir, 'results');
    mkdirSync(results, { recursive: true });
    const script = join(cluster.dir, 'job.sh');
    writeFileSync(script, `#!/bin/sh\ndate +%s.%N > ${results}/$1.start\nsleep 2\necho "result $1 $(hostname)" > ${results}/$1\n`, { mode: 0o755 });
    const ids = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        cluster.sbatch(['-c', '1', '--time=1', '--comment', 'estuary-inputs=s3://kek/run42', '-o', `${results}/slurm-%j.out`, script, String(i)]),
      ),
    );
    // When the near cache holds the whole input: the pre-warm's end, seen from outside.
    const warmAt = await waitFor('pre-warm', async () => ((await held('s3://kek/run42')) === 5 * MB ? Date.now() / 1000 : undefined), 30_000, 50);
    let shown = '';
    await waitFor(
      'jobs done',
      async () => {
        const st = await api<{ pools: { pool: string; reason: { why?: string } }[] }>('/api/v1/status');
        shown ||= st.pools.find((p) => p.pool === 'near/small' && p.reason.why?.includes('cached at near'))?.reason.why ?? '';
        const left = (await cluster.slurm('squeue', ['-h', '-o', '%i'])).stdout.split('\n').filter((l) => ids.includes(l.trim()));
        return left.length === 0 ? true : undefined;
      },
      90_000,
    );
    // The first start's reason, from the log: what the cache held before the pre-warm.
    const starts = child.output().split('\n').filter((l) => l.includes('"msg":"starting drone"')).map((l) => JSON.parse(l) as { site: string; reason: { why: string } });
    expect(starts.every((l) => l.site === 'near')).toBe(true);
    const why = starts[0]!.reason.why;
    expect(shown).toMatch(/pending jobs? need s3:\/\/kek\/run42 \(5 MB, [45] MB cached at near\)/); // the API says it too
    expect(why).toMatch(/pending jobs? need s3:\/\/kek\/run42 \(5 MB, 4 MB cached at near\): near on-demand \$0\.08\/h, 1 new drone; far \+\$0\.00044 a job/);
    const ran = Array.from({ length: 6 }, (_, i) => ({
      host: readFileSync(join(results, String(i)), 'utf8').trim().split(' ')[2]!,
      start: Number(readFileSync(join(results, `${i}.start`), 'utf8')),
    }));
    const onDrones = ran.filter((r) => r.host.startsWith(prefix));
    // Steered jobs may still run at home (site_near|home: the home node's feature), so the home
    // node keeps taking jobs as it frees while the drones boot; the rest ran at near.
    expect(onDrones.length).toBeGreaterThanOrEqual(2);
    expect(ran.length - onDrones.length).toBeGreaterThanOrEqual(1);
    expect(onDrones.every((r) => r.host.startsWith(`${prefix}near-`))).toBe(true);
    expect(Math.min(...onDrones.map((r) => r.start))).toBeGreaterThan(warmAt - 0.06);
    // Over near's link only the missing megabyte came, once, however many jobs need the input.
    expect(await received()).toBe(before + 1 * MB);
    // Steered: the jobs that waited required near's drones.
    const log = child.output();
    expect(log).toMatch(/"msg":"steered \d+ job\(s\) to near"/);
    expect(log).toMatch(/"msg":"pre-warming the site cache"/);
    const all = (await api<{ drones: { id: string; site: string; startReason: { rule: string } }[] }>('/api/v1/drones?all=1')).drones;
    expect(all.length).toBeGreaterThan(0);
    expect(all.every((d) => d.site === 'near' && d.startReason.rule === 'estuary')).toBe(true);
    await waitFor('drones released', async () => ((await api<{ drones: unknown[] }>('/api/v1/drones')).drones.length === 0 ? true : undefined), 30_000);
    expect(namespacesWith(prefix)).toEqual([]);
    expect(readdirSync(cluster.dir)).toContain('near');
  }, 150_000);
});
