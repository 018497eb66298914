import { describe, expect, it } from 'vitest';
import { renderReport, scenarioSection } from '../../../bench/report/markdown.ts';
import { RESULTS_SCHEMA_VERSION, resultsSchema } from '../../../bench/results.ts';
import { fuseRecord } from './fixture.ts';

const section = scenarioSection(fuseRecord, (id) => `${id}.svg`);

describe('scenarioSection', () => {
  it('lists every peer with its version, or why it was skipped or failed', () => {
    expect(section).toContain('| goofys | skipped | goofys not on PATH |');
    expect(section).toContain('| rclone | failed | cp 1×1000MB: cp failed: Input/output error |');
  });
  it('tabulates medians with their spread, datasets as rows and peers as columns', () => {
    expect(section).toContain('| case | estuary | s3fs | sdk-limit |');
    expect(section).toContain('| 1000×1MB | 21.0 ±5% | 11.0 ±9% | 42.0 ±5% |');
    expect(section).toContain('| 1×1000MB | 85.0 ±0% | 50.0 ±0% | – |');
  });
  it('gives the ratios to s3fs and to the limit', () => {
    expect(section).toContain('| 1000×1MB | 1.91× s3fs, 50% of limit | 26% of limit | 3.82× s3fs |');
  });
  it('links the charts and keeps the notes', () => {
    expect(section).toContain('![Upload speed (cp local → mount)](fuse-cp-up.svg)');
    expect(section).toContain('- a note <with> markup & such');
  });
});

describe('renderReport', () => {
  it('starts with the machine and settings', () => {
    const results = resultsSchema.parse({
      schema: RESULTS_SCHEMA_VERSION,
      startedAt: '2026-01-01T00:00:00Z',
      finishedAt: '2026-01-01T00:10:00Z',
      interrupted: false,
      machine: {
        hostname: 'h',
        os: 'Debian',
        kernel: '6',
        arch: 'x64',
        cpuModel: 'cpu',
        cpus: 2,
        memoryBytes: 2 ** 30,
      },
      versions: { estuary: '0.1.0', node: '24' },
      settings: {
        scenarios: ['fuse'],
        quick: false,
        network: { name: 'site-cloud', rttMs: 20, bandwidthBps: 1e9 },
        backend: 's3rver',
        out: '/x',
      },
      scenarios: [fuseRecord],
    });
    const md = renderReport(results, (id) => `${id}.svg`);
    expect(md).toMatch(/^# estuary bench: fuse\n/);
    expect(md).toContain('| network | site-cloud (RTT 20 ms, 1000 Mbit/s) |');
    expect(md).toContain('## fuse');
  });
});
