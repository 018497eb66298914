import { describe, expect, it } from 'vitest';
import { renderReport, scenarioSection } from '../../../bench/report/markdown.ts';
import { scenarioRecord } from '../../../bench/results.ts';
import { fuseRecord, fuseResult } from './fixture.ts';
import { resultsOf } from './results-fixture.ts';

const section = scenarioSection(fuseRecord, (id) => `${id}.svg`);

describe('scenarioSection', () => {
  it('lists every peer with its version, or why it was skipped or failed', () => {
    expect(section).toContain('| goofys | skipped | goofys not on PATH |');
    expect(section).toContain('| rclone | failed | cp 1×1000MB: cp failed: Input/output error |');
    expect(section).toContain('| sdk-alone (reference) | ok |');
  });
  it('tabulates medians with their spread, datasets as rows, competitors then the reference as columns', () => {
    expect(section).toContain('| case | estuary | s3fs | sdk-alone (reference) |');
    expect(section).toContain('| 1000×1MB | 21.0 ±5% | 11.0 ±9% | 42.0 ±5% |');
    expect(section).toContain('| 1×1000MB | 85.0 ±0% | 50.0 ±0% | 50.0 ±0% |');
  });
  it('writes ratios to s3fs with their direction, for higher- and lower-is-better rows', () => {
    expect(section).toContain("Compared with s3fs, the baseline (each peer's median against s3fs's):");
    expect(section).toContain('| 1000×1MB | 1.91× faster | 3.8× faster |');
    expect(section).toContain('| 1×1000MB | 1.70× faster | level |');
    // Memory: lower is better; estuary uses 7.2 times what s3fs does.
    expect(section).toContain('| 1000×1MB | 7.2× more memory |');
    // Seconds: lower is better; estuary takes a quarter of s3fs's time.
    expect(section).toContain('| ls -l 1000 files | 4.0× faster |');
    expect(section).not.toMatch(/\d× s3fs/);
  });
  it('writes ratios to the reference the same way, and lets a peer beat it', () => {
    expect(section).toContain('Compared with sdk-alone (reference), a yardstick rather than a bound:');
    expect(section).toContain('| 1000×1MB | 2.0× slower | 3.8× slower |');
    expect(section).toContain('| 1×1000MB | 1.70× faster | level |');
    expect(section).not.toContain('of limit');
  });
  it('says in the body how the figures were taken, the interleaving and the load', () => {
    expect(section).toContain('- cp up: time of cp plus the unmount');
    expect(section).toContain('peers took turns within every run (A, B, C, then again)');
    expect(section).toContain('Load average during this scenario: start 0.50 0.40 0.30, end 0.70 0.50 0.30');
  });
  it('flags a scenario whose peers ran in blocks', () => {
    const blocked = scenarioRecord(fuseResult, {
      durationSeconds: 1,
      interleaving: { cases: 1, problems: ["cp up 1000×1MB: s3fs's run 2 came before estuary's run 1"] },
    });
    expect(scenarioSection(blocked, (id) => id)).toContain(
      "**peers did NOT take turns** in 1 case(s): cp up 1000×1MB: s3fs's run 2 came before estuary's run 1",
    );
    expect(renderReport(resultsOf([blocked]), (id) => id)).toContain('**Peers did not take turns** in 1 case(s)');
  });
  it('links the charts and keeps the notes', () => {
    expect(section).toContain('![Upload speed (cp local → mount)](fuse-cp-up.svg)');
    expect(section).toContain('- a note <with> markup & such');
  });
});

describe('renderReport', () => {
  const md = renderReport(resultsOf([fuseRecord]), (id) => `${id}.svg`);

  it('opens with the title and a one-paragraph summary of the headline ratios', () => {
    const [title, blank, summary] = md.split('\n');
    expect(title).toBe('# estuary bench: fuse');
    expect(blank).toBe('');
    expect(summary).toBe(
      '**Summary.** Medians of 3 runs, peers taking turns within every run. ' +
        '**fuse**, estuary against s3fs: upload speed 1.70×–1.91× faster; metadata operations 4.0× faster; ' +
        'peak memory uploading 7.2× more memory. ' +
        'Against sdk-alone (reference, not a competitor): upload speed from 2.0× slower to 1.70× faster.',
    );
  });
  it('shows the machine, its load average and the settings', () => {
    expect(md).toContain('| network | site-cloud (RTT 20 ms, 1000 Mbit/s) |');
    expect(md).toContain('| load average | start 0.25 0.20 0.10, end 0.50 0.30 0.20 (1, 5, 15 min) on 2 cores |');
    expect(md).toContain('## fuse');
    expect(md).not.toContain('Busy machine');
  });
  it('warns at the top when the 1-minute load at the start exceeded the cores', () => {
    const busy = renderReport(
      resultsOf([fuseRecord], { load: { start: [5.82, 5.22, 3.49], end: [3.1, 4, 3.6] } }),
      (id) => id,
    );
    const lines = busy.split('\n');
    expect(lines[2]).toMatch(
      /^\*\*Busy machine:\*\* the 1-minute load average was 5\.82 at the start and 3\.10 at the end, above its 2 cores/,
    );
    expect(busy).toContain('The machine was busy (load above its 2 cores).');
    // Exactly at the core count is not busy.
    const level = renderReport(resultsOf([fuseRecord], { load: { start: [2, 2, 2], end: [9, 9, 9] } }), (id) => id);
    expect(level).not.toContain('Busy machine');
  });
  it('says when a run is --quick or single, in the summary and on every chart table', () => {
    const quick = renderReport(resultsOf([fuseRecord], { quick: true }), (id) => id);
    expect(quick).toContain('**Summary.** A `--quick` run: reduced sizes, a smoke test, not a measurement.');
    expect(quick).toContain('**--quick run: reduced sizes, a smoke test, not a measurement.**');
    const once = scenarioRecord(
      { ...fuseResult, measurements: fuseResult.measurements.map((m) => ({ ...m, samples: m.samples.slice(0, 1) })) },
      { durationSeconds: 1 },
    );
    const single = renderReport(resultsOf([once]), (id) => id);
    expect(single).toContain('**Summary.** A single run: one sample per figure, no spread.');
    expect(single).toContain('**single run: one sample per bar, no spread.**');
  });
  it('says so when the baseline was not measured, and who was', () => {
    const noSquid = scenarioRecord(
      {
        scenario: 'gateway',
        settings: {},
        baseline: 'squid',
        peers: [
          { peer: 'estuary', status: 'ok' },
          { peer: 'squid', status: 'skipped', reason: 'squid not on PATH' },
          { peer: 'nginx', status: 'ok' },
        ],
        measurements: [
          { case: '4 KiB', peer: 'estuary', metric: 'requestRate', samples: [1, 2] },
          { case: '4 KiB', peer: 'nginx', metric: 'requestRate', samples: [1, 2] },
        ],
        notes: [],
      },
      { durationSeconds: 1 },
    );
    expect(renderReport(resultsOf([noSquid]), (id) => id)).toContain(
      '**gateway**: its baseline squid was not measured next to estuary (squid skipped); its tables show estuary beside nginx.',
    );
  });
  it('names only the peers measured when estuary ran under other names', () => {
    const hostile = scenarioRecord(
      {
        scenario: 'gateway',
        settings: {},
        baseline: 'squid',
        peers: [
          { peer: 'estuary-w1', status: 'ok' },
          { peer: 'estuary-w2', status: 'ok' },
        ],
        measurements: [
          { case: 'hostile origins: worker restarts', peer: 'estuary-w1', metric: 'workerRestarts', samples: [0] },
          { case: 'hostile origins: worker restarts', peer: 'estuary-w2', metric: 'workerRestarts', samples: [0] },
        ],
        notes: [],
      },
      { durationSeconds: 1 },
    );
    expect(renderReport(resultsOf([hostile]), (id) => id)).toContain(
      '**gateway**: its baseline squid was not measured next to estuary; its tables show estuary-w1, estuary-w2.',
    );
  });
  it('says so when a scenario has nothing to compare with', () => {
    const alone = scenarioRecord(
      {
        scenario: 'discovery',
        settings: {},
        peers: [
          { peer: 'shoal', status: 'skipped', reason: 'not installable' },
          { peer: 'estuary', status: 'ok' },
        ],
        measurements: [{ case: 'p99', peer: 'estuary', metric: 'latency', samples: [1, 2, 3] }],
        notes: [],
      },
      { durationSeconds: 1 },
    );
    expect(renderReport(resultsOf([alone]), (id) => id)).toContain(
      '**discovery**: it has no peer to compare with (shoal skipped); its figures stand alone.',
    );
  });
});
