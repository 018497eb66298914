// Faults against a real Slurm 22.05 cluster, one fault per test on one cluster for the file:
// slurmctld killed with -9 mid-burst and started again (boot failures: e2e-boot-fails.test.ts, a
// cluster of its own to keep each file well under a minute). Each run ends by checking for orphans
// (namespaces, slurmd, Slurm nodes, live registry rows) and lost or repeated jobs.

import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Coord, getJson, startCoordinator as startCoordinatorIn, waitFor } from './helpers/coordinator-process.ts';
import { namespacesWith, startSlurmCluster, type SlurmCluster, writeCoordinatorConfig } from './helpers/slurm-cluster.ts';

const prefix = `f${process.pid % 100000}-`;
const features = ['estuary', 'site_cloud', 'type_small', 'cloud'];
/**
 * The outage. The coordinator reads Slurm every second here, so every interval of the outage is
 * a read that old code turned into "every drone's node is gone"; 15 intervals show the rule as
 * well as 60 and keep the file inside CI's budget. It is also longer than SlurmdTimeout (10 s), so
 * the restarted controller must take back drones it has not heard from for longer than that.
 * ESTUARY_FAULT_OUTAGE_S=60 runs the full minute.
 */
const OUTAGE_S = Number(process.env.ESTUARY_FAULT_OUTAGE_S ?? 15);
let cluster: SlurmCluster;
let configPath: string;

beforeAll(async () => {
  cluster = await startSlurmCluster({ homeNodes: 1, homeCpus: 1, droneFeatures: features, droneCpus: 2 });
  configPath = writeCoordinatorConfig(cluster, { prefix, quota: 2, bootTimeout: '30s' });
}, 60_000);

const startCoordinator = (): Promise<Coord> => startCoordinatorIn(cluster, configPath);
const get = getJson;

async function jobsLeft(ids: readonly string[]): Promise<number> {
  const r = await cluster.slurm('squeue', ['-h', '-o', '%i']);
  const live = new Set(r.stdout.split('\n').map((l) => l.trim()));
  return ids.filter((id) => live.has(id)).length;
}

async function expectNothingLeft(c: Coord): Promise<void> {
  await waitFor('drones released', async () => ((await get<{ drones: unknown[] }>(c, '/api/v1/drones')).drones.length === 0 ? true : undefined), 40_000);
  expect(namespacesWith(prefix)).toEqual([]);
  const nodes = await cluster.slurm('sinfo', ['-h', '-N', '-o', '%N']);
  expect(nodes.stdout.split('\n').filter((n) => n.startsWith(prefix))).toEqual([]);
  const ps = await cluster.slurm('ps', ['-eo', 'args']);
  expect(ps.stdout.split('\n').filter((l) => l.includes('slurmd') && l.includes(prefix))).toEqual([]);
}

describe('coordinator faults against Slurm 22.05', () => {
  it(`slurmctld killed -9 mid-burst for ${OUTAGE_S} s: no drone stopped, no job requeued, the burst finishes`, async () => {
    const c = await startCoordinator();
    const results = join(cluster.dir, 'results-outage');
    mkdirSync(results, { recursive: true });
    const script = join(cluster.dir, 'job-outage.sh');
    writeFileSync(script, `#!/bin/sh\nsleep 22\necho "$1 $(hostname) \${SLURM_RESTART_COUNT:-0}" > ${results}/$1\n`, { mode: 0o755 });
    const ids = await Promise.all(Array.from({ length: 5 }, (_, i) => cluster.sbatch(['-c', '1', '-o', '/dev/null', script, String(i)])));
    // Mid-burst: every job running, four of them on the two drones.
    await waitFor('jobs running on both drones', async () => {
      const r = await cluster.slurm('squeue', ['-h', '-t', 'R', '-o', '%N']);
      return r.stdout.split('\n').filter((n) => n.startsWith(prefix)).length === 4 ? true : undefined;
    }, 40_000);
    // slurmctld writes its state a little after each change; a kill -9 before that loses what
    // changed (jobs, dynamic nodes) to Slurm itself, whatever the coordinator does. Kill it once
    // both files are newer than the burst, as in an outage mid-burst rather than mid-submit.
    const burstAt = Date.now();
    await waitFor('Slurm state saved', async () => {
      const saved = ['job_state', 'node_state'].map((f) => statSync(join(cluster.dir, 'state', f)).mtimeMs);
      return saved.every((t) => t > burstAt) ? true : undefined;
    }, 30_000);
    const before = (await get<{ drones: { id: string; state: string }[] }>(c, '/api/v1/drones')).drones;
    await cluster.killController();
    const outageEnds = Date.now() + OUTAGE_S * 1000;
    const seen = await waitFor('status unreachable', async () => {
      const s = await get<{ batch: string; batchError: string | null }>(c, '/api/v1/status');
      return s.batch === 'unreachable' ? s : undefined;
    }, 15_000);
    expect(seen.batchError).toMatch(/squeue|sinfo/);
    expect(await (await fetch(`http://127.0.0.1:${c.port}/metrics`)).text()).toMatch(/estuary_coordinator_batch_system_up 0/);
    await new Promise((r) => setTimeout(r, Math.max(0, outageEnds - Date.now())));
    const during = (await get<{ drones: { id: string; state: string }[] }>(c, '/api/v1/drones')).drones;
    expect(during).toEqual(before.map((d) => expect.objectContaining({ id: d.id, state: d.state })));
    expect(namespacesWith(prefix)).toHaveLength(2);
    await cluster.startController();
    await waitFor('jobs done', async () => ((await jobsLeft(ids)) === 0 ? true : undefined), 90_000);
    // Every job ran once, to its end: none was requeued.
    for (let i = 0; i < ids.length; i++) expect(readFileSync(join(results, String(i)), 'utf8')).toMatch(/ 0\n$/);
    const all = (await get<{ drones: { id: string }[] }>(c, '/api/v1/drones?all=1')).drones;
    for (const d of all) {
      const t = await get<{ transitions: { to: string }[] }>(c, `/api/v1/drones/${d.id}`);
      expect(t.transitions.map((x) => x.to)).not.toContain('lost');
    }
    await expectNothingLeft(c);
  }, 180_000);

});
