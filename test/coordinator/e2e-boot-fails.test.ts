// A site whose instances always fail to boot, against a real Slurm 22.05 cluster and real netns
// drones whose boot script exits 1: three are launched, then the site is backed off and called
// unhealthy with the reason in the API, CLI and metrics, and nothing is left behind.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { runProgram } from '../../coordinator/proc.ts';
import { NODE } from '../helpers/process.ts';
import { onTeardown } from '../helpers/cleanup.ts';
import { type Coord, getJson, startCoordinator as startCoordinatorIn, waitFor } from './helpers/coordinator-process.ts';
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

const startCoordinator = (): Promise<Coord> => startCoordinatorIn(cluster, configPath);
const get = getJson;

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
