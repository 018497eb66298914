// The spot tail rule ("The tail goes on demand", docs/COORDINATOR.md) must never leave work with
// nowhere to run. A site whose daily budget affords spot drones but not an on-demand one, with a
// stated reclaim rate that makes the tail "likely to be reclaimed": the rule closes the spot pool
// and places the tail "as if the site sold on demand only" — where nothing is affordable — and
// with no spot drone draining the pool is judged again every interval and closed again. No drone
// ever starts; the jobs wait forever. Expected: a tail the on-demand pool cannot take stays on
// spot (a reclaim delays the end by a boot and half a run; not running delays it forever), so
// every job finishes, as it does with `spot-interruption-rate: 0` (checked here too).

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { NODE } from '../../helpers/process.ts';

afterAll(runTeardowns);

const BIN = join(import.meta.dirname, '..', '..', '..', 'bin', 'estuary.js');

function simulate(rate: number): { finished: number; dronesStarted: number } {
  const dir = mkdtempSync(join(tmpdir(), 'estuary-tail-starve-'));
  onTeardown(() => rmSync(dir, { recursive: true, force: true }));
  const jobs = Array.from({ length: 8 }, (_, i) => JSON.stringify({ id: i + 1, submit: 0, runtime: 3000, timeLimit: 3600 }));
  writeFileSync(join(dir, 'tail.json'), `[\n${jobs.join(',\n')}\n]\n`);
  writeFileSync(
    join(dir, 's.yaml'),
    `name: tail-starve
trace: tail.json
home: { nodes: 0, cores: 1, feature: home, at: store }
interval: 30s
idle-time: 10m
max-time: 2d
controller: { type: estuary }
machine-types:
  m: { cores: 2, memory: 4GiB }
storage:
  store: { urls: ["s3://x/"] }
sites:
  aws:
    quota: 10
    machine-types: [m]
    cost-per-core-hour: 1.0
    spot-per-core-hour: 0.1
    spot-interruption-rate: ${rate}
    budget-per-day: 1
    boot-latency: 3m
    sim: { boot: 3m, spot-interruption-rate: 0 }
`,
  );
  const r = spawnSync(NODE, [BIN, 'coordinator', 'simulate', '--json', join(dir, 's.yaml')], { encoding: 'utf8', timeout: 50_000, killSignal: 'SIGKILL' });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { finished: number; dronesStarted: number };
}

test('spot affordable, on demand over budget, no reclaim rate: every job finishes on spot (control)', () => {
  expect(simulate(0).finished).toBe(8);
}, 55_000);

test('spot affordable, on demand over budget, a high reclaim rate: the tail rule does not starve the work', () => {
  // Today: 0 of 8 finished, 0 drones started in two simulated days.
  const r = simulate(1);
  expect(r.dronesStarted).toBeGreaterThan(0);
  expect(r.finished).toBe(8);
}, 55_000);
