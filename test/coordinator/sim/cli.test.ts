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

  it('says in one line what is wrong with the file', async () => {
    writeFileSync(join(dir, 'bad.yaml'), 'name: s\ntrace: jobs.json\nhome: { nodes: 0, cores: 1 }\nmachine-types: {}\nsites:\n  c: { quota: 2, machine-types: [m] }\n');
    const r = await estuary(['coordinator', 'simulate', join(dir, 'bad.yaml')]);
    expect(r.code).toBe(2);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/scenario .*bad\.yaml: sites\.c\.machine-types: unknown machine type "m"/);
  }, 60_000);
});
