// Runs `estuary bench` as a user would, in its own process, and reads back what it wrote.

import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseResults, type Results } from '../../bench/results.ts';
import { onTeardown } from '../helpers/cleanup.ts';
import { NODE, startChild, type Child } from '../helpers/process.ts';

// Registers the file's teardown hook while the file is collected: a first onTeardown() inside a
// running test would be too late for vitest to add the afterAll that runs them.
onTeardown(() => undefined);

export const BIN = new URL('../../bin/estuary.js', import.meta.url).pathname;

export function startBench(args: readonly string[], env: NodeJS.ProcessEnv = process.env): Child {
  return startChild(NODE, [BIN, 'bench', ...args, '--log-format', 'json'], { env });
}

export async function runBench(
  args: readonly string[],
  env?: NodeJS.ProcessEnv,
): Promise<{ code: number | null; output: string }> {
  const child = startBench(args, env);
  const code = await child.exited;
  return { code, output: child.output() };
}

export async function readResults(dir: string): Promise<Results> {
  const raw = JSON.parse(await readFile(join(dir, 'results.json'), 'utf8')) as unknown;
  return parseResults(raw);
}

/** Mounts whose mountpoint lies under `dir`, from the kernel's own table. */
export async function mountsUnder(dir: string): Promise<string[]> {
  const info = await readFile('/proc/self/mountinfo', 'utf8');
  return info
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((m) => m.startsWith(dir));
}

export function namespacesOf(pid: number): string[] {
  const r = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  return r.stdout.split('\n').filter((l) => l.startsWith(`estbench${pid}`));
}

export function onPath(bin: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;
}
