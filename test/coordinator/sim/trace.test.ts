import { describe, expect, it } from 'vitest';
import { parseJsonJobs, parseSwf } from '../../../coordinator/sim/trace.ts';
import { parseScenario } from '../../../coordinator/sim/scenario.ts';

const swfLine = (f: number[]) => f.join(' ');
// job, submit, wait, run, alloc procs, cpu, used mem KB/proc, req procs, req time, req mem, status, ...
const ok = swfLine([1, 10, 5, 600, 2, -1, 1024000, 2, 1200, -1, 1, 3, 1, -1, 1, 1, -1, -1]);

describe('SWF', () => {
  it('reads submit, run time, processors, memory, requested time, user and executable; skips header lines', () => {
    const t = parseSwf(`; Version: 2.2\n;   Computer: test\n\n${ok}\n`);
    expect(t.jobs).toEqual([
      { id: '1', submit: 10_000, runtime: 600_000, cpus: 2, memoryMb: 2000, timeLimitMs: 1_200_000, inputs: [], outputBytes: 0, user: 'u3', name: 'job' },
    ]);
    // An executable number names the job (field 14).
    expect(parseSwf(ok.replace(/ -1 1 1 -1 -1$/, ' 7 1 1 -1 -1')).jobs[0]).toMatchObject({ user: 'u3', name: 'app7' });
  });

  it('falls back to requested processors and memory, and skips jobs that never ran', () => {
    const requested = swfLine([2, 0, -1, 60, -1, -1, -1, 4, -1, 512000, 1, 1, 1, -1, 1, 1, -1, -1]);
    const cancelled = swfLine([3, 0, -1, 0, 1, -1, -1, 1, -1, -1, 5, 1, 1, -1, 1, 1, -1, -1]);
    const t = parseSwf(`${requested}\n${cancelled}\n`);
    expect(t.jobs.map((j) => [j.cpus, j.memoryMb, j.timeLimitMs])).toEqual([[4, 2000, undefined]]);
    expect(t.skipped).toBe(1);
  });

  it('refuses a line with the wrong field count or a non-number, naming the line, in one line', () => {
    for (const [text, part] of [
      [`${ok}\n1 2 3`, 'line 2: expected 18 fields (SWF), found 3'],
      [ok.replace(' 600 ', ' x6 '), 'line 1: field 4 is "x6", not a number'],
      [ok.replace(/^1 10/, '1 -10'), 'line 1: field 2 (submit time) is negative'],
    ] as const) {
      let err: Error & { code?: string } = new Error('none');
      try {
        parseSwf(text, 'w.swf');
      } catch (e) {
        err = e as Error & { code?: string };
      }
      expect(err.code).toBe('ESTUARY_CO_TRACE');
      expect(err.message).toContain(`trace w.swf: ${part}`);
      expect(err.message).not.toContain('\n');
    }
  });
});

describe('JSON jobs', () => {
  it('reads inputs and outputs with their sizes, in submit order', () => {
    const t = parseJsonJobs(JSON.stringify({ jobs: [
      { id: 'b', submit: 5, runtime: 60, inputs: [{ url: 's3://x/a', bytes: 10 }], outputs: [{ bytes: 7 }, { bytes: 3 }] },
      { submit: 1, runtime: 30, cpus: 2, time_limit: 90, user: 'ana', name: 'reco' },
    ] }).replace('time_limit', 'timeLimit'));
    expect(t.jobs.map((j) => [j.id, j.submit, j.cpus, j.outputBytes, j.inputs.length, j.timeLimitMs, j.user, j.name])).toEqual([
      ['2', 1000, 2, 0, 0, 90_000, 'ana', 'reco'],
      ['b', 5000, 1, 10, 1, undefined, 'user', 'job'],
    ]);
  });

  it('names the job and key of a bad value, and refuses what is not JSON', () => {
    expect(() => parseJsonJobs('[{"submit": 0, "runtime": 5}, {"submit": 0, "runtime": 5, "inputs": [{"url": "s3://a"}]}]', 'j.json')).toThrow(
      /trace j\.json: job 1\.inputs\.0\.bytes: /,
    );
    expect(() => parseJsonJobs('[{"submit": 0, "runtime": -1}]', 'j.json')).toThrow(/job 0\.runtime/);
    expect(() => parseJsonJobs('[{"submit": 0, "runtime": 1, "extra": 1}]', 'j.json')).toThrow(/job 0: .*extra/i);
    expect(() => parseJsonJobs('{"jobs": 3}', 'j.json')).toThrow(/top level: expected an array/);
    expect(() => parseJsonJobs('nope', 'j.json')).toThrow(/trace j\.json: JSON: /);
  });
});

describe('scenario files', () => {
  const base = (extra: string) => `name: t\ntrace: t.json\nhome: { nodes: 1, cores: 2 }\nmachine-types: { m: { cores: 2, memory: 4GiB } }\nsites:\n  c:\n    quota: 2\n    machine-types: [m]\n${extra}`;
  const read = () => '[{"submit": 0, "runtime": 60}]';

  it('parses with the coordinator schemas and the simulator section', () => {
    const s = parseScenario(base('    cost-per-core-hour: 0.05\n    sim: { boot: 90s, api-error-rate: 0.1 }\n'), '/x/s.yaml', read);
    expect(s.sites[0]).toMatchObject({ name: 'c', boot: 90_000, apiErrorRate: 0.1, config: { quota: 2, costPerCoreHour: 0.05 } });
    expect(s.trace.jobs).toHaveLength(1);
  });

  it('names the key of a mistake in one line', () => {
    const cases: [string, RegExp][] = [
      [base('    quota: -1\n').replace('    quota: 2\n', ''), /scenario s\.yaml: sites\.c\.quota: /],
      [base('    sim: { boot-time: 5m }\n'), /scenario s\.yaml: sites\.c\.sim: .*boot-time|bootTime/],
      [base('').replace('[m]', '[n]'), /sites\.c\.machine-types: unknown machine type "n"/],
      [base('    sim: { at: nowhere }\n'), /unknown storage location "nowhere"/],
      ['name: t\n  bad: [', /scenario s\.yaml: \(file\): not YAML/],
    ];
    for (const [text, re] of cases) {
      let msg = '';
      try {
        parseScenario(text, 's.yaml', read);
      } catch (e) {
        msg = (e as Error).message;
        expect((e as { code?: string }).code).toBe('ESTUARY_CO_SCENARIO');
      }
      expect(msg).toMatch(re);
      expect(msg).not.toContain('\n');
    }
  });
});
