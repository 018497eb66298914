import { describe, expect, it } from 'vitest';
import { parseResults, RESULTS_SCHEMA_VERSION, scenarioRecord } from '../../bench/results.ts';
import { fuseRecord, fuseResult } from './report/fixture.ts';
import { resultsOf } from './report/results-fixture.ts';

describe('scenarioRecord', () => {
  const find = (c: string, p: string) => fuseRecord.measurements.find((m) => m.case === c && m.peer === p)!;

  it('summarises every measurement and keeps the raw samples', () => {
    const m = find('cp up 1000×1MB', 's3fs');
    expect(m.samples).toEqual([10, 12, 11]);
    expect(m.summary).toMatchObject({ n: 3, median: 11, min: 10, max: 12 });
  });
  it('takes unit and direction from the metric named, declared once in bench/metrics.ts', () => {
    expect(find('rss up 1000×1MB', 'estuary')).toMatchObject({
      metric: 'peakMemory',
      unit: 'MB',
      higherIsBetter: false,
    });
    expect(find('cp up 1000×1MB', 'estuary')).toMatchObject({ unit: 'MB/s', higherIsBetter: true });
  });
  it('gives ratios to the baseline and the reference, above 1 meaning better', () => {
    expect(find('cp up 1000×1MB', 'estuary').vsBaseline).toBeCloseTo(21 / 11);
    expect(find('cp up 1000×1MB', 'estuary').vsReference).toBeCloseTo(0.5);
    // The reference is not a bound: a peer can beat it.
    expect(find('cp up 1×1000MB', 'estuary').vsReference).toBeCloseTo(1.7);
    expect(find('ls -l 1000 files', 'estuary').vsBaseline).toBeCloseTo(0.795 / 0.2);
    expect(find('rss up 1000×1MB', 'estuary').vsBaseline).toBeCloseTo(100 / 720);
  });
  it('gives no ratio to itself or where the reference was not measured', () => {
    expect(find('cp up 1000×1MB', 's3fs').vsBaseline).toBeUndefined();
    expect(find('cp up 1000×1MB', 'sdk-alone').vsReference).toBeUndefined();
    expect(find('rss up 1000×1MB', 'estuary').vsReference).toBeUndefined();
  });
  it('keeps the method, the load averages and the interleaving check', () => {
    expect(fuseRecord.method).toEqual(['cp up: time of cp plus the unmount']);
    expect(fuseRecord.load).toEqual({ start: [0.5, 0.4, 0.3], end: [0.7, 0.5, 0.3] });
    expect(fuseRecord.interleaving).toEqual({ cases: 3, problems: [] });
  });
  it('records a failed scenario with its reason', () => {
    const r = scenarioRecord(
      { ...fuseResult, measurements: [] },
      { durationSeconds: 1, failure: 'backend did not start' },
    );
    expect(r).toMatchObject({ status: 'failed', error: 'backend did not start', reference: 'sdk-alone' });
  });
  it('writes unmeasurable samples as null, since JSON has no NaN', () => {
    const r = scenarioRecord(
      {
        ...fuseResult,
        measurements: [{ case: 'x', peer: 'p', metric: 'duration', samples: [Number.NaN] }],
      },
      { durationSeconds: 1 },
    );
    expect(r.measurements[0]!.samples).toEqual([null]);
    expect(r.measurements[0]!.summary.median).toBeNull();
  });
});

describe('parseResults', () => {
  it('reads a schema-1 file, whose reference was called the limit', () => {
    const v2 = resultsOf([fuseRecord]);
    const { load: _load, ...withoutLoad } = v2;
    const v1 = {
      ...withoutLoad,
      schema: 'estuary-bench/1',
      scenarios: v2.scenarios.map(({ reference, measurements, method: _m, ...s }) => ({
        ...s,
        limit: reference,
        measurements: measurements.map(({ vsReference, metric: _metric, ...m }) => ({
          ...m,
          ...(vsReference === undefined ? {} : { ofLimit: vsReference }),
        })),
      })),
    };
    const read = parseResults(JSON.parse(JSON.stringify(v1)));
    expect(read.schema).toBe(RESULTS_SCHEMA_VERSION);
    expect(read.scenarios[0]!.reference).toBe('sdk-alone');
    const m = read.scenarios[0]!.measurements.find((x) => x.case === 'cp up 1000×1MB' && x.peer === 'estuary')!;
    expect(m.vsReference).toBeCloseTo(0.5);
    expect(read.load).toBeUndefined();
  });
  it('refuses a file of an unknown schema', () => {
    expect(() => parseResults({ ...resultsOf([fuseRecord]), schema: 'estuary-bench/9' })).toThrow();
  });
});
