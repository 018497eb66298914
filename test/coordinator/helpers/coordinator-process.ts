// A real `estuary coordinator` process against a test Slurm cluster, for the end-to-end fault
// tests: started with a config file, stopped when the test finishes, its output and Slurm's state
// printed when the test fails; its status API read as JSON; a condition waited for.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { onTestFailed, onTestFinished } from 'vitest';
import { type Child, NODE, startChild } from '../../helpers/process.ts';
import type { SlurmCluster } from './slurm-cluster.ts';

const BIN = new URL('../../../bin/estuary.js', import.meta.url).pathname;

export interface Coord {
  child: Child;
  port: number;
}

export async function startCoordinator(cluster: SlurmCluster, configPath: string): Promise<Coord> {
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

export const getJson = async <T>(c: Coord, path: string): Promise<T> =>
  (await (await fetch(`http://127.0.0.1:${c.port}${path}`)).json()) as T;

/** Polls `f` every 250 ms until it answers something, for at most `ms`. */
export async function waitFor<T>(what: string, f: () => Promise<T | undefined>, ms: number): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
