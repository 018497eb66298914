// A site whose instances always fail to boot, against a real Slurm 22.05 cluster and real netns
// drones whose boot script exits 1: three are launched, then the site is backed off and called
// unhealthy with the reason in the API, CLI and metrics, and nothing is left behind.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFailed, onTestFinished } from 'vitest';
import { runProgram } from '../../coordinator/proc.ts';
import { NODE, startChild, type Child } from '../helpers/process.ts';
import { onTeardown } from '../helpers/cleanup.ts';
import { killNamespace, namespacesWith, startSlurmCluster, type SlurmCluster, writeCoordinatorConfig } from './helpers/slurm-cluster.ts';

const BIN = new URL('../../bin/estuary.js', import.meta.url).pathname;
const prefix = `g${process.pid % 100000}-`;
const features = ['estuary', 'site_cloud', 'type_small', 'cloud'];
let cluster: SlurmCluster;
let configPath: string;

beforeAll(async () => {
  cluster = await startSlurmCluster({ homeNodes: 1, homeCpus: 1, droneFeatures: features, droneCpus: 2 });
  onTeardown(async () => {
    for (const ns of namespacesWith(prefix)) await killNamespace(ns);
  });
  const boot = join(cluster.dir, 'boot-fails.sh');
  writeFileSync(boot, '#!/bin/sh\necho "cloud-init: cannot mount /data" >&2\nexit 1\n', { mode: 0o755 });
  configPath = writeCoordinatorConfig(cluster, { prefix, quota: 2, bootTimeout: '30s', boot });
}, 60_000);

interface Coord {
  child: Child;
  port: number;
}

async function startCoordinator(): Promise<Coord> {
  const child = startChild(NODE, [BIN, 'coordinator', '--config', configPath, '--log-format', 'json'], { env: { ...process.env } });
  onTestFinished(() => child.stop('SIGTERM').then(() => undefined));
  onTestFailed(async () => {
    const q = await cluster.slurm('squeue', ['-o', '%i %T %r %N']);
    console.log(`coordinator output:\n${child.output().slice(-6000)}\nsqueue:\n${q.stdout}`);
    console.log(`slurmctld:\n${readFileSync(join(cluster.dir, 'log', 'slurmctld.log'), 'utf8').slice(-4000)}`);
  });
  const m = await child.waitFor(/"port":(\d+)/, 20_000);
  return { child, port: Number(m[1]) };
}

const get = async <T>(c: Coord, path: string): Promise<T> => (await (await fetch(`http://127.0.0.1:${c.port}${path}`)).json()) as T;

async function waitFor<T>(what: string, f: () => Promise<T | undefined>, ms: number): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function expectNothingLeft(c: Coord): Promise<void> {
  await waitFor('drones released', async () => ((await get<{ drones: unknown[] }>(c, '/api/v1/drones')).drones.length === 0 ? true : undefined), 40_000);
  expect(namespacesWith(prefix)).toEqual([]);
  const nodes = await cluster.slurm('sinfo', ['-h', '-N', '-o', '%N']);
  expect(nodes.stdout.split('\n').filter((n) => n.startsWith(prefix))).toEqual([]);
  const ps = await cluster.slurm('ps', ['-eo', 'args']);
  expect(ps.stdout.split('\n').filter((l) => l.includes('slurmd') && l.includes(prefix))).toEqual([]);
}

describe('a site whose instances never boot, against Slurm 22.05', () => {
  it('instances whose boot always fails: three, then the site is backed off and unhealthy, nothing left', async () => {
    const c = await startCoordinator();
    // Counted before the jobs exist: the loop runs from start-up and may start a drone at once.
    const before = (await get<{ drones: unknown[] }>(c, '/api/v1/drones?all=1')).drones.length;
    // --constraint=cloud: the home node cannot take them, so the demand stays.
    const ids = await Promise.all([0, 1].map(() => cluster.sbatch(['-c', '1', '--constraint=cloud', '-o', '/dev/null', '--wrap', 'true'])));
    onTestFinished(() => cluster.slurm('scancel', ids).then(() => undefined));
    const site = await waitFor('site unhealthy', async () => {
      const s = await get<{ sites: { name: string; healthy: boolean; problem: string | null }[] }>(c, '/api/v1/status');
      return s.sites.find((x) => x.name === 'cloud' && !x.healthy && x.problem?.includes('in a row failed')) ?? undefined;
    }, 40_000);
    // The boot script's failure is seen by the deploy or by the next status call, as timing has it.
    expect(site.problem).toMatch(/^3 instances in a row failed \(last: (site-error|deploy-failed)\)/);
    await new Promise((r) => setTimeout(r, 5000)); // five intervals: nothing more is launched
    const all = (await get<{ drones: { state: string }[] }>(c, '/api/v1/drones?all=1')).drones;
    expect(all.length - before).toBe(3);
    const cli = await runProgram(NODE, [BIN, 'coordinator', 'status', '--url', `http://127.0.0.1:${c.port}`]);
    expect(cli.stdout).toMatch(/cloud +\d\/2 +NO .*3 instances in a row failed/);
    expect(await (await fetch(`http://127.0.0.1:${c.port}/metrics`)).text()).toMatch(/estuary_coordinator_site_healthy\{site="cloud",problem="3 instances in a row failed[^"]*"\} 0/);
    await waitFor('failed drones cleaned up', async () => (namespacesWith(prefix).length === 0 ? true : undefined), 20_000);
    await expectNothingLeft(c);
  }, 120_000);
});
