// `estuary bench coordinator` end to end through the bench runner, on one tiny scenario file:
// every policy runs, results.json carries the measurements and the time series, and the report
// links the charts it wrote.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readResults, runBench } from './helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'estuary-bench-coord-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('estuary bench coordinator', () => {
  it('runs a scenario file under every policy and writes results, report and charts', async () => {
    writeFileSync(join(dir, 'jobs.json'), JSON.stringify(Array.from({ length: 30 }, (_, i) => ({ id: i, submit: i * 10, runtime: 900, outputs: [{ bytes: 1e8 }] }))));
    writeFileSync(
      join(dir, 'tiny.yaml'),
      `name: tiny\ntrace: jobs.json\nhome: { nodes: 1, cores: 4 }\nmachine-types: { m: { cores: 4, memory: 8GiB } }\nsites:\n  cloud:\n    quota: 4\n    machine-types: [m]\n    cost-per-core-hour: 0.05\n    egress-per-gb: 0.09\n    sim: { boot: 2m }\n`,
    );
    const out = join(dir, 'out');
    const { code, output } = await runBench(['coordinator', '--scenario-file', join(dir, 'tiny.yaml'), '--out', out]);
    expect(code, output).toBe(0);
    const results = await readResults(out);
    const s = results.scenarios[0]!;
    expect(s.status).toBe('ok');
    const peers = new Set(s.measurements.map((m) => m.peer));
    expect([...peers]).toEqual(expect.arrayContaining(['lsf-rc', 'cobald-linear', 'cobald-relative', 'glideinwms', 'slurm-power', 'estuary']));
    const cost = s.measurements.find((m) => m.case === 'tiny: egress cost' && m.peer === 'lsf-rc')!;
    // 30 jobs × 100 MB, those that ran in the cloud at $0.09/GB: more than nothing, at most all.
    expect(cost.samples[0]).toBeGreaterThan(0);
    expect(cost.samples[0]).toBeLessThanOrEqual(0.27 + 1e-9);
    expect(s.series?.some((x) => x.id === 'coordinator-tiny-lsf-rc-jobs')).toBe(true);
    expect(existsSync(join(out, 'coordinator-tiny-cost.svg'))).toBe(true);
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toContain('(coordinator-tiny-lsf-rc-jobs.svg)');
  }, 120_000);

  it('refuses a broken scenario file with its one-line error', async () => {
    writeFileSync(join(dir, 'bad.yaml'), 'name: bad\ntrace: nothing.json\nhome: { nodes: 1, cores: 1 }\nmachine-types: {}\nsites: {}\n');
    const { output } = await runBench(['coordinator', '--scenario-file', join(dir, 'bad.yaml'), '--out', join(dir, 'out2')]);
    expect(output).toMatch(/scenario .*bad\.yaml: sites: give at least one site/);
  }, 60_000);
});
