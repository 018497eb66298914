import { describe, expect, it } from 'vitest';
import { scenarioRecord } from '../../bench/results.ts';
import { fuseRecord, fuseResult } from './report/fixture.ts';

describe('scenarioRecord', () => {
  const find = (c: string, p: string) => fuseRecord.measurements.find((m) => m.case === c && m.peer === p)!;

  it('summarises every measurement and keeps the raw samples', () => {
    const m = find('cp up 1000×1MB', 's3fs');
    expect(m.samples).toEqual([10, 12, 11]);
    expect(m.summary).toMatchObject({ n: 3, median: 11, min: 10, max: 12 });
  });
  it('gives ratios to the baseline and the limit, above 1 meaning better', () => {
    expect(find('cp up 1000×1MB', 'estuary').vsBaseline).toBeCloseTo(21 / 11);
    expect(find('cp up 1000×1MB', 'estuary').ofLimit).toBeCloseTo(0.5);
    expect(find('ls -l 1000 files', 'estuary').vsBaseline).toBeCloseTo(0.795 / 0.2);
  });
  it('gives no ratio to itself or where the reference was not measured', () => {
    expect(find('cp up 1000×1MB', 's3fs').vsBaseline).toBeUndefined();
    expect(find('cp up 1000×1MB', 'sdk-limit').ofLimit).toBeUndefined();
    expect(find('cp up 1×1000MB', 'estuary').ofLimit).toBeUndefined();
  });
  it('records a failed scenario with its reason', () => {
    const r = scenarioRecord({ ...fuseResult, measurements: [] }, 1, 'backend did not start');
    expect(r).toMatchObject({ status: 'failed', error: 'backend did not start', limit: 'sdk-limit' });
  });
  it('writes unmeasurable samples as null, since JSON has no NaN', () => {
    const r = scenarioRecord(
      {
        ...fuseResult,
        measurements: [{ case: 'x', peer: 'p', unit: 's', higherIsBetter: false, samples: [Number.NaN] }],
      },
      1,
    );
    expect(r.measurements[0]!.samples).toEqual([null]);
    expect(r.measurements[0]!.summary.median).toBeNull();
  });
});
