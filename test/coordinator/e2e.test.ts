// End to end on this machine: a real Slurm cluster with two home nodes, a netns cloud site with
// a quota of 3 drones, and `estuary coordinator` as its own process. A batch of short jobs is
// submitted at once: the home nodes fill first, the coordinator bursts, every job finishes with
// its output, the drones are released after the idle time, and nothing is left behind. Then
// again with a kill -9 of the coordinator mid-burst and a restart that adopts the drones.

import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFailed, onTestFinished } from 'vitest';
import { runProgram } from '../../coordinator/proc.ts';
import { NODE, startChild, type Child } from '../helpers/process.ts';
import { namespacesWith, startSlurmCluster, type SlurmCluster, writeCoordinatorConfig } from './helpers/slurm-cluster.ts';

const BIN = new URL('../../bin/estuary.js', import.meta.url).pathname;
const prefix = `e${process.pid % 100000}-`;
const features = ['estuary', 'site_cloud', 'type_small', 'cloud'];
const QUOTA = 3;
let cluster: SlurmCluster;
let configPath: string;

beforeAll(async () => {
  cluster = await startSlurmCluster({ homeNodes: 2, homeCpus: 1, droneFeatures: features, droneCpus: 2 });
  configPath = writeCoordinatorConfig(cluster, { prefix, quota: QUOTA, bootTimeout: '30s' });
}, 60_000);

interface Coord {
  child: Child;
  port: number;
}

async function startCoordinator(): Promise<Coord> {
  const child = startChild(NODE, [BIN, 'coordinator', '--config', configPath, '--log-format', 'json'], { env: { ...process.env } });
  onTestFailed(async () => {
    const q = await cluster.slurm('squeue', ['-o', '%i %T %r %N']);
    const n = await cluster.slurm('sinfo', ['-N', '-o', '%N %T %f']);
    console.log(`coordinator output:\n${child.output().slice(-6000)}\nsqueue:\n${q.stdout}\nsinfo:\n${n.stdout}`);
    const drones = join(cluster.dir, 'drones');
    for (const d of existsSync(drones) ? readdirSync(drones) : [])
      console.log(`${d} slurmd:\n${readFileSync(join(drones, d, 'slurmd.out'), 'utf8').slice(-3000)}`);
    console.log(`slurmctld:\n${readFileSync(join(cluster.dir, 'log', 'slurmctld.log'), 'utf8').slice(-5000)}`);
  });
  const m = await child.waitFor(/"port":(\d+)/, 20_000);
  return { child, port: Number(m[1]) };
}

async function api<T>(c: Coord, path: string): Promise<T> {
  const res = await fetch(`http://127.0.0.1:${c.port}${path}`);
  return (await res.json()) as T;
}

interface DroneRow {
  id: string;
  state: string;
  cost: number;
  reason: { rule: string };
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

/** Submits n jobs at once; each writes its result file. */
async function submitBatch(tag: string, n: number, seconds: number): Promise<{ ids: string[]; results: string }> {
  const results = join(cluster.dir, `results-${tag}`);
  mkdirSync(results, { recursive: true });
  const script = join(cluster.dir, `job-${tag}.sh`);
  writeFileSync(script, `#!/bin/sh\nsleep ${seconds}\necho "result $1 $(hostname)" > ${results}/$1\n`, { mode: 0o755 });
  const ids = await Promise.all(
    Array.from({ length: n }, (_, i) => cluster.sbatch(['-c', '1', '-o', `${results}/slurm-%j.out`, script, String(i)])),
  );
  return { ids, results };
}

async function jobsLeft(ids: string[]): Promise<number> {
  const r = await cluster.slurm('squeue', ['-h', '-o', '%i']);
  const live = new Set(r.stdout.split('\n').map((l) => l.trim()));
  return ids.filter((id) => live.has(id)).length;
}

async function slurmNodesWithPrefix(): Promise<string[]> {
  const r = await cluster.slurm('sinfo', ['-h', '-N', '-o', '%N']);
  return r.stdout.split('\n').filter((n) => n.startsWith(prefix));
}

function hostOfResults(results: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => {
    const text = readFileSync(join(results, String(i)), 'utf8').trim();
    expect(text).toMatch(new RegExp(`^result ${i} \\S+$`));
    return text.split(' ')[2]!;
  });
}

async function expectNothingLeft(c: Coord): Promise<void> {
  await waitFor(
    'drones released',
    async () => ((await api<{ drones: DroneRow[] }>(c, '/api/v1/drones')).drones.length === 0 ? true : undefined),
    30_000,
  );
  expect(namespacesWith(prefix)).toEqual([]);
  expect(await slurmNodesWithPrefix()).toEqual([]);
  const r = await cluster.slurm('ps', ['-eo', 'args']);
  expect(r.stdout.split('\n').filter((l) => l.includes('slurmd') && l.includes(prefix))).toEqual([]);
  expect(existsSync(join(cluster.dir, 'drones'))).toBe(true);
}

describe('estuary coordinator end to end (Slurm 22.05 + netns cloud)', () => {
  it('bursts 12 jobs to the cloud within the quota, then releases every drone', async () => {
    const c = await startCoordinator();
    onTestFinished(() => c.child.stop('SIGTERM').then(() => undefined));
    const { ids, results } = await submitBatch('a', 12, 2);
    let peak = 0;
    let sawStatus = false;
    await waitFor(
      'jobs done',
      async () => {
        const drones = (await api<{ drones: DroneRow[] }>(c, '/api/v1/drones')).drones;
        peak = Math.max(peak, drones.length);
        if (!sawStatus && drones.some((d) => d.state === 'available')) {
          // While bursting: the CLI status, the page without JavaScript and /metrics agree.
          const st = await runProgram(NODE, [BIN, 'coordinator', 'status', '--url', `http://127.0.0.1:${c.port}`]);
          expect(st.code).toBe(0);
          expect(st.stdout).toMatch(new RegExp(`${prefix}cloud-\\d+ +cloud +available`));
          const page = await (await fetch(`http://127.0.0.1:${c.port}/`)).text();
          expect(page).toContain('<td>available</td>');
          expect(page).not.toContain('<script');
          const metrics = await (await fetch(`http://127.0.0.1:${c.port}/metrics`)).text();
          expect(metrics).toMatch(/estuary_coordinator_drones\{site="cloud",state="available"\} [1-3]/);
          sawStatus = true;
        }
        return (await jobsLeft(ids)) === 0 ? true : undefined;
      },
      60_000,
    );
    expect(sawStatus).toBe(true);
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(QUOTA);
    const hosts = hostOfResults(results, 12);
    // The first jobs had the home nodes; the rest burst to drones.
    expect(hosts.filter((h) => h.startsWith('home')).length).toBeGreaterThanOrEqual(2);
    expect(hosts.filter((h) => h.startsWith(prefix)).length).toBeGreaterThan(0);
    await expectNothingLeft(c);
    // KEK's Figure 8 for this run: jobs pending, running at home, running in the cloud.
    const points = (await api<{ points: { pending: number; home: number; drones: number }[] }>(c, '/api/v1/timeline')).points;
    expect(Math.max(...points.map((p) => p.pending))).toBeGreaterThan(0);
    expect(Math.max(...points.map((p) => p.home))).toBe(2);
    expect(Math.max(...points.map((p) => p.drones))).toBeGreaterThan(0);
    const svg = await (await fetch(`http://127.0.0.1:${c.port}/timeline.svg`)).text();
    expect(svg).toContain('class="series-drones"');
    // Kept for a look after the run (docs/COORDINATOR.md, "Status").
    writeFileSync(join(tmpdir(), 'estuary-coordinator-e2e-figure8.svg'), svg);
    const all = (await api<{ drones: DroneRow[] }>(c, '/api/v1/drones?all=1')).drones;
    expect(all.every((d) => d.state === 'down' && d.reason.rule === 'released')).toBe(true);
    expect(all.every((d) => d.cost > 0)).toBe(true);
    await c.child.stop('SIGTERM');
  }, 120_000);

  it('a coordinator killed with -9 mid-burst is restarted, adopts its drones and finishes', async () => {
    let c = await startCoordinator();
    onTestFinished(() => c.child.stop('SIGTERM').then(() => undefined));
    const { ids, results } = await submitBatch('b', 12, 3);
    await waitFor(
      'a drone available',
      async () =>
        (await api<{ drones: DroneRow[] }>(c, '/api/v1/drones')).drones.some((d) => d.state === 'available') ? true : undefined,
      30_000,
    );
    c.child.proc.kill('SIGKILL');
    await c.child.exited;
    const alive = namespacesWith(prefix);
    expect(alive.length).toBeGreaterThan(0); // the drones outlive their coordinator
    c = await startCoordinator();
    const m = await c.child.waitFor(/"adopted":(\d+),"orphans":(\d+)/, 20_000);
    expect(Number(m[1])).toBeGreaterThanOrEqual(alive.length);
    expect(Number(m[2])).toBe(0);
    await waitFor('jobs done', async () => ((await jobsLeft(ids)) === 0 ? true : undefined), 60_000);
    const hosts = hostOfResults(results, 12);
    expect(hosts.filter((h) => h.startsWith(prefix)).length).toBeGreaterThan(0);
    await expectNothingLeft(c);
    // No drone was started twice for one id, and no more than the quota were ever up at once.
    const detail = await Promise.all(
      alive.map((id) => api<{ transitions: { to: string }[] }>(c, `/api/v1/drones/${id}`)),
    );
    for (const d of detail) expect(d.transitions.filter((t) => t.to === 'requested')).toHaveLength(1);
    await c.child.stop('SIGTERM');
  }, 120_000);

  it('a drone whose slurmd dies under its jobs is lost: jobs requeued by Slurm, drone replaced, nothing left', async () => {
    const c = await startCoordinator();
    onTestFinished(() => c.child.stop('SIGTERM').then(() => undefined));
    const results = join(cluster.dir, 'results-c');
    mkdirSync(results, { recursive: true });
    const script = join(cluster.dir, 'job-c.sh');
    // Long on its first run (it is there when slurmd dies), short once Slurm has requeued it.
    writeFileSync(
      script,
      `#!/bin/sh\nif [ "\${SLURM_RESTART_COUNT:-0}" -gt 0 ]; then sleep 1; else sleep 300; fi\necho "result $1 $(hostname) \${SLURM_RESTART_COUNT:-0}" > ${results}/$1\n`,
      { mode: 0o755 },
    );
    const ids = await Promise.all([0, 1].map((i) => cluster.sbatch(['-c', '1', '--constraint=cloud', '-o', '/dev/null', script, String(i)])));
    const victim = await waitFor(
      'jobs on a drone',
      async () => {
        const r = await cluster.slurm('squeue', ['-h', '-t', 'R', '-o', '%N']);
        const nodes = r.stdout.split('\n').filter((n) => n.startsWith(prefix));
        return nodes.length === 2 ? nodes[0] : undefined;
      },
      30_000,
    );
    // Kill only slurmd: its jobs' slurmstepd live on, as after a crash of the daemon.
    const pids = (await runProgram('ip', ['netns', 'pids', victim!])).stdout.split('\n').filter(Boolean);
    for (const pid of pids)
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'slurmd') process.kill(Number(pid), 'SIGKILL');
    // Slurm notices after SlurmdTimeout (10 s here); the coordinator then finds the node down,
    // calls the drone lost, and sets the node DOWN and deletes it, which requeues the jobs.
    await waitFor(
      'drone lost',
      async () => {
        const d = await api<{ transitions: { to: string }[] }>(c, `/api/v1/drones/${victim}`);
        return d.transitions.some((t) => t.to === 'lost') ? true : undefined;
      },
      60_000,
    );
    await waitFor('jobs requeued', async () => {
      const r = await cluster.slurm('squeue', ['-h', '-j', ids.join(','), '-o', '%T %r']);
      return r.stdout.trim().split('\n').every((l) => l === 'PENDING BeginTime') ? true : undefined;
    }, 10_000);
    // Slurm 22.05 holds a requeued job back for 120 s (BeginTime); an admin in a hurry, or this
    // test, lets it go at once.
    for (const id of ids) await cluster.slurm('scontrol', ['update', `jobid=${id}`, 'starttime=now']);
    await waitFor('jobs done', async () => ((await jobsLeft(ids)) === 0 ? true : undefined), 60_000);
    for (const i of [0, 1]) {
      const [, , host, restarts] = readFileSync(join(results, String(i)), 'utf8').trim().split(' ');
      expect(host).not.toBe(victim);
      expect(Number(restarts)).toBeGreaterThan(0);
    }
    const one = await api<{ transitions: { to: string; reason: { rule: string } }[] }>(c, `/api/v1/drones/${victim}`);
    expect(one.transitions.map((t) => t.to)).toContain('lost');
    await expectNothingLeft(c);
  }, 150_000);
});
