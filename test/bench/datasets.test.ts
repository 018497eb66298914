import { describe, expect, it } from 'vitest';
import {
  datasetBytes,
  fuseDiskEstimate,
  PAPER_DATASETS,
  PAPER_METADATA,
  QUICK_DATASETS,
  QUICK_METADATA,
  selectCases,
} from '../../bench/fuse/datasets.ts';

describe('datasets', () => {
  it("are the KEK paper's Table 1: the same gigabyte cut four ways", () => {
    expect(PAPER_DATASETS.map((d) => d.label)).toEqual(['1000×1MB', '100×10MB', '10×100MB', '1×1000MB']);
    for (const d of PAPER_DATASETS) expect(datasetBytes(d)).toBe(1e9);
  });
  it('keep four shapes in quick mode at a fraction of the bytes', () => {
    expect(QUICK_DATASETS).toHaveLength(4);
    const quick = QUICK_DATASETS.reduce((s, d) => s + datasetBytes(d), 0);
    expect(quick).toBeLessThan(50e6);
  });
});

describe('selectCases', () => {
  it('keeps everything when no cases are named', () => {
    expect(selectCases(PAPER_DATASETS, undefined)).toEqual({ datasets: PAPER_DATASETS, metadata: true });
  });
  it('picks rows by shape, in full and in quick mode alike', () => {
    const cases = ['1x1000MB', '100x10MB'] as const;
    expect(selectCases(PAPER_DATASETS, cases).datasets.map((d) => d.label)).toEqual(['100×10MB', '1×1000MB']);
    expect(selectCases(QUICK_DATASETS, cases).datasets.map((d) => d.label)).toEqual(['5×1MB', '1×10MB']);
    expect(selectCases(PAPER_DATASETS, cases).metadata).toBe(false);
  });
  it('can run the metadata suite alone', () => {
    expect(selectCases(PAPER_DATASETS, ['metadata'])).toEqual({ datasets: [], metadata: true });
  });
});

describe('fuseDiskEstimate', () => {
  it('counts source, download and the local server copy, plus staging and the first-byte file', () => {
    const need = fuseDiskEstimate(PAPER_DATASETS, PAPER_METADATA, true);
    // 4 GB × 3 copies + 1 GB staging + 2 × 100 MB, then 10% headroom.
    expect(need).toBe(Math.ceil((12e9 + 1e9 + 2e8) * 1.1));
  });
  it('needs no server copy against a remote endpoint', () => {
    expect(fuseDiskEstimate(PAPER_DATASETS, PAPER_METADATA, false)).toBeLessThan(
      fuseDiskEstimate(PAPER_DATASETS, PAPER_METADATA, true),
    );
  });
  it('leaves out the first-byte file when the metadata suite does not run', () => {
    expect(fuseDiskEstimate(PAPER_DATASETS, undefined, true)).toBe(Math.ceil((12e9 + 1e9) * 1.1));
    expect(fuseDiskEstimate([], undefined, true)).toBe(0);
  });
  it('is small in quick mode', () => {
    expect(fuseDiskEstimate(QUICK_DATASETS, QUICK_METADATA, true)).toBeLessThan(200e6);
  });
});
