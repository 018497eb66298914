// `estuary coordinator simulate FILE`: the policy comes from --controller, as for a real
// coordinator; a missing or broken file is one line and exit 2.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { NODE } from '../../helpers/process.ts';

const BIN = new URL('../../../bin/estuary.js', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'estuary-sim-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function estuary(args: string[]): Promise<{ code: number; out: string; err: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(NODE, [BIN, ...args], { timeout: 60_000 });
    return { code: 0, out: stdout, err: stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, out: x.stdout, err: x.stderr };
  }
}

describe('estuary coordinator simulate', () => {
  it('runs the scenario under the controller given and prints the figures', async () => {
    writeFileSync(join(dir, 'jobs.json'), JSON.stringify([{ submit: 0, runtime: 600 }, { submit: 0, runtime: 600 }]));
    writeFileSync(join(dir, 's.yaml'), 'name: s\ntrace: jobs.json\nhome: { nodes: 0, cores: 1 }\nmachine-types: { m: { cores: 1, memory: 4GiB } }\nsites:\n  c: { quota: 2, machine-types: [m], cost-per-core-hour: 0.1 }\n');
    const r = await estuary(['coordinator', 'simulate', join(dir, 's.yaml'), '--controller', '{type: glideinwms}']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/policy\s+glideinwms/);
    expect(r.out).toMatch(/jobs finished\s+2 of 2/);
  }, 60_000);

  it('prints one JSON object with --json, and buys spot or takes it away with --sim-market', async () => {
    writeFileSync(join(dir, 'jobs2.json'), JSON.stringify(Array.from({ length: 4 }, () => ({ submit: 0, runtime: 3600 }))));
    writeFileSync(join(dir, 'spot.yaml'), 'name: spot\ntrace: jobs2.json\nhome: { nodes: 0, cores: 1 }\nmachine-types: { m: { cores: 1, memory: 4GiB } }\nsites:\n  c: { quota: 4, machine-types: [m], cost-per-core-hour: 0.1, spot-per-core-hour: 0.02, sim: { boot: 0s } }\n');
    const run = async (market: string) => {
      const r = await estuary(['coordinator', 'simulate', join(dir, 'spot.yaml'), '--json', '--sim-market', market, '--sim-every', '2']);
      expect(r.code, r.err).toBe(0);
      return JSON.parse(r.out) as { scenario: string; jobs: number; computeDollars: number; sellsSpot: boolean; sites: { name: string; spotPerCoreHour?: number }[]; cpuMs: number };
    };
    const spot = await run('spot');
    expect(spot).toMatchObject({ scenario: 'spot', jobs: 2, sellsSpot: true, sites: [{ name: 'c', spotPerCoreHour: 0.02 }] });
    const od = await run('on-demand');
    expect(od.scenario).toBe('spot-on-demand');
    expect(od.sites[0]!.spotPerCoreHour).toBeUndefined();
    // Two one-hour jobs on two drones: on demand costs five times spot's price.
    expect(od.computeDollars / spot.computeDollars).toBeCloseTo(5, 0);
    expect(spot.cpuMs).toBeGreaterThan(0);
  }, 60_000);

  it('takes the scenario\'s own controller only when none is given, and says "none finished" rather than NaN', async () => {
    writeFileSync(join(dir, 'big.json'), JSON.stringify([{ submit: 0, runtime: 60, cpus: 64 }]));
    writeFileSync(join(dir, 'own.yaml'), 'name: own\ntrace: big.json\ncontroller: {type: estuary}\nhome: { nodes: 0, cores: 1 }\nmachine-types: { m: { cores: 1, memory: 4GiB } }\nsites:\n  c: { quota: 2, machine-types: [m] }\n');
    const own = await estuary(['coordinator', 'simulate', join(dir, 'own.yaml')]);
    expect(own.code, own.err).toBe(0);
    expect(own.out).toMatch(/^policy\s+estuary$/m);
    expect(own.out).toMatch(/^jobs finished\s+0 of 1$/m);
    expect(own.out).toMatch(/^makespan\s+none finished$/m);
    expect(own.out).not.toMatch(/NaN/);
    const given = await estuary(['coordinator', 'simulate', join(dir, 'own.yaml'), '--controller', '{type: threshold}']);
    expect(given.out).toMatch(/^policy\s+lsf-rc$/m);
  }, 60_000);

  it('says in one line what is wrong with the file', async () => {
    writeFileSync(join(dir, 'bad.yaml'), 'name: s\ntrace: jobs.json\nhome: { nodes: 0, cores: 1 }\nmachine-types: {}\nsites:\n  c: { quota: 2, machine-types: [m] }\n');
    const r = await estuary(['coordinator', 'simulate', join(dir, 'bad.yaml')]);
    expect(r.code).toBe(2);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/scenario .*bad\.yaml: sites\.c\.machine-types: unknown machine type "m"/);
  }, 60_000);
});
