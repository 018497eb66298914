// Hostile and mistaken inputs to `estuary coordinator simulate`: scenario files and traces
// (docs/BENCHMARKING.md, "Scenario files", "Trace formats"). A mistake is one line naming the key
// and exit 2 (ESTUARY_CO_SCENARIO / ESTUARY_CO_TRACE); the simulator never hangs; what a trace
// or scenario names never reaches the terminal as control characters; and a scenario is "the
// coordinator's own configuration ... parsed by the coordinator's schemas".

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { NODE } from '../../helpers/process.ts';

afterAll(runTeardowns);

const ROOT = join(import.meta.dirname, '..', '..', '..');
const BIN = join(ROOT, 'bin', 'estuary.js');

const JOBS = JSON.stringify([
  { submit: 0, runtime: 60 },
  { submit: 10, runtime: 60 },
]);

const BASE = `name: t
trace: jobs.json
home: { nodes: 1, cores: 4, feature: home }
machine-types:
  m: { cores: 4, memory: 8GiB }
sites:
  aws: { quota: 4, machine-types: [m], cost-per-core-hour: 0.04 }
`;

/** Writes the scenario and its trace files into a fresh directory; runs simulate on it. */
function simulate(scenario: string, files: Record<string, string> = { 'jobs.json': JOBS }, extra: string[] = [], timeoutMs = 15_000) {
  const dir = mkdtempSync(join(tmpdir(), 'estuary-atk-sim-'));
  onTeardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 's.yaml'), scenario);
  for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, name), body);
  const r = spawnSync(NODE, [BIN, 'coordinator', 'simulate', join(dir, 's.yaml'), ...extra], { encoding: 'utf8', timeout: timeoutMs, killSignal: 'SIGKILL' });
  return { code: r.status, timedOut: r.signal === 'SIGKILL', stdout: r.stdout, stderr: r.stderr };
}

test('a scenario interval of 0 is refused with one line naming interval, not an endless run', () => {
  // Today the event loop's next tick is "now" for ever: the run never ends (killed after 15 s).
  // The coordinator's own --interval refuses anything under 100ms ("expected a duration from
  // 100ms to 1h"); a scenario's interval is "written as in the coordinator's config".
  for (const v of ['0', '0s']) {
    const r = simulate(BASE.replace('name: t\n', `name: t\ninterval: ${v}\n`), undefined, [], 10_000);
    expect(r.timedOut, `interval: ${v} hangs the simulator`).toBe(false);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/scenario .*: interval: /);
  }
});

test('home.at naming no storage location is refused like a site\'s sim.at is', () => {
  // A site's `sim.at` or `links` naming an unknown location is refused ("unknown storage
  // location"); home.at is accepted silently, and a typo (site_store for site-store) turns every
  // read the home cluster makes of its own storage into WAN traffic (4 GB here instead of 0).
  const scenario = `name: t
trace: data.json
home: { nodes: 2, cores: 4, feature: home, at: site_store }
machine-types:
  m: { cores: 4, memory: 8GiB }
storage:
  site-store: { urls: ["root://site/"] }
sites:
  aws: { quota: 4, machine-types: [m], cost-per-core-hour: 0.04 }
`;
  const data = JSON.stringify([0, 1, 2, 3].map((i) => ({ submit: 0, runtime: 60, inputs: [{ url: `root://site/f${i}`, bytes: 1e9 }] })));
  const r = simulate(scenario, { 'data.json': data }, ['--json']);
  expect(r.code, `accepted; wanBytes ${r.stdout.match(/"wanBytes":(\d+)/)?.[1]}`).toBe(2);
  expect(r.stderr).toMatch(/home\.at.*unknown storage location "site_store"/);
});

test('home-location naming no storage location is refused', () => {
  // Outputs "go to the home location"; one that names nothing is silently accepted today.
  const r = simulate(BASE.replace('name: t\n', 'name: t\nhome-location: nowhere\n'));
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/home-location.*unknown storage location "nowhere"/);
});

test('a controller written in the scenario is the one simulated when none is given on the command line', () => {
  // scenario.ts: "A controller to use when none is given on the command line." The CLI always
  // passes its default controller (threshold), so the scenario's choice is silently ignored and
  // the table says `policy lsf-rc` for a scenario that asked for estuary.
  const r = simulate(BASE.replace('name: t\n', 'name: t\ncontroller: {type: estuary}\n'));
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^policy\s+estuary$/m);
});

test('an SWF field holding terminal escapes is not echoed raw to the terminal', () => {
  // SWF traces come from public archives; the error names the field's text with its ESC and BEL
  // bytes intact, so a crafted trace retitles or clears the reader's terminal (ESC ] 0 ; … BEL,
  // ESC [ 2 J). lib/terminal-text.ts exists for exactly this.
  const swf = '1 0 -1 60 1 -1 -1 1 -1 -1 1 1 1 1 1 1 -1 -1\n2 5 -1 60 \x1b]0;pwned\x07\x1b[2J -1 -1 1 -1 -1 1 1 1 1 1 1 -1 -1\n';
  const r = simulate(BASE.replace('jobs.json', 't.swf'), { 't.swf': swf });
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/line 2: field 5/);
  expect(r.stderr).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
});

test('a scenario key holding terminal escapes is not echoed raw in "Unrecognized key"', () => {
  const r = simulate(BASE.replace('cost-per-core-hour: 0.04 }', 'cost-per-core-hour: 0.04, "\\e]0;pwned\\a\\e[2Jx": 1 }'));
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/Unrecognized key/);
  expect(r.stderr).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
});

test('a site name the coordinator refuses is refused in a scenario too', () => {
  // "parsed by the coordinator's schemas, so a scenario is also a config a real coordinator
  // would accept": --sites refuses this name, the scenario takes it.
  const r = simulate(BASE.replace('  aws: {', '  "a\\e[2Jb": {'));
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/ESTUARY_CO_SCENARIO|scenario .*: sites/);
});

test('an SWF submit time too large for the clock is refused, not a run of 14 empty days', () => {
  // 1e306 s is finite in the file but Infinity once in milliseconds: the job never arrives and
  // the run idles to max-time (40 320 intervals) to report "0 of 1".
  const swf = '1 1e306 -1 60 1 -1 -1 1 -1 -1 1 1 1 1 1 1 -1 -1\n';
  const r = simulate(BASE.replace('jobs.json', 't.swf'), { 't.swf': swf });
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/line 1: field 2/);
});

test('regressions that hold: cyclic/duplicate ids, a job bigger than every node, an empty trace', () => {
  const dup = JSON.stringify([{ id: 1, submit: 0, runtime: 60 }, { id: 1, submit: 0, runtime: 600 }, { id: 1, submit: 0, runtime: 60 }]);
  const a = simulate(BASE, { 'jobs.json': dup }, ['--json']);
  expect(a.code).toBe(0);
  expect(JSON.parse(a.stdout)).toMatchObject({ jobs: 3, finished: 3 });
  const big = JSON.stringify([{ submit: 0, runtime: 60, cpus: 64 }, { submit: 0, runtime: 60 }]);
  const b = simulate(BASE, { 'jobs.json': big }, ['--json']);
  expect(b.code).toBe(0);
  expect(JSON.parse(b.stdout)).toMatchObject({ jobs: 2, finished: 1 });
  const c = simulate(BASE, { 'jobs.json': '[]' }, ['--json']);
  expect(c.code).toBe(0);
  expect(JSON.parse(c.stdout)).toMatchObject({ jobs: 0, finished: 0 });
}, 30_000);
