// A site's `boot-timeout` (Slurm's ResumeTimeout under slurm-power) of 0. The flag refuses it
// ("invalid value "0" for --boot-timeout: expected a duration from 1s to 8760h"); the same
// setting per site (docs/COORDINATOR.md: "(per site: boot-timeout)") and a scenario's take it.
// With 0 every drone is given up the moment it is asked for and another is started: on the
// simulator, 20 ten-minute jobs and a quota of 10 become 6497 drones, 108 paid core-hours and no
// job finished (under every controller), in 45–80 s of wall time.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { NODE } from '../../helpers/process.ts';

afterAll(runTeardowns);

const BIN = join(import.meta.dirname, '..', '..', '..', 'bin', 'estuary.js');
const run = (args: string[]) => spawnSync(NODE, [BIN, 'coordinator', ...args], { encoding: 'utf8', timeout: 15_000, killSignal: 'SIGKILL' });

test('a site boot-timeout of 0 is refused with one line naming the key, as --boot-timeout 0 is', () => {
  const flag = run(['--boot-timeout', '0', '--print-config']);
  expect(flag.status).toBe(2);
  const site = run([
    '--machine-types', '{m: {cores: 1, memory: 1GiB}}',
    '--sites', '{aws: {adapter: command, quota: 1, machine-types: [m], boot-timeout: 0s, command: {start: x, stop: y, status: z}}}',
    '--print-config',
  ]);
  expect(site.status, 'sites.aws.boot-timeout: 0s accepted').toBe(2);
  expect(site.stderr).toMatch(/boot-timeout/);
});

test('a scenario boot-timeout of 0 is refused, not simulated as thousands of given-up drones', () => {
  const dir = mkdtempSync(join(tmpdir(), 'estuary-atk-bt-'));
  onTeardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'jobs.json'), JSON.stringify([{ submit: 0, runtime: 600 }]));
  writeFileSync(join(dir, 's.yaml'), `name: t
trace: jobs.json
boot-timeout: 0s
max-time: 2h
home: { nodes: 0, cores: 1 }
machine-types:
  one: { cores: 1, memory: 4GiB }
sites:
  aws: { quota: 10, machine-types: [one], cost-per-core-hour: 0.04, sim: { boot: 2m } }
`);
  const r = spawnSync(NODE, [BIN, 'coordinator', 'simulate', join(dir, 's.yaml'), '--json'], { encoding: 'utf8', timeout: 30_000, killSignal: 'SIGKILL' });
  expect(r.status, `accepted: ${r.stdout.match(/"finished":\d+|"dronesStarted":\d+/g)?.join(' ')}`).toBe(2);
  expect(r.stderr).toMatch(/boot-timeout/);
});
