// Run times learned from finished jobs (coordinator/run-times.ts) and sacct's text read as hostile
// input (coordinator/batch/sacct-parse.ts): pure, no cluster.

import { describe, expect, it } from 'vitest';
import { parseSacct } from '../../coordinator/batch/sacct-parse.ts';
import { localTime } from '../../coordinator/batch/slurm.ts';
import { homeView } from '../../coordinator/batch/slurm-parse.ts';
import { estimateRunTime, estimateText, type FinishedJob, KEPT, MIN_JOBS, QUANTILE, RunTimeHistory } from '../../coordinator/run-times.ts';

const MIN = 60_000;
let serial = 0;
const done = (user: string, name: string, minutes: number, partition = 'hybrid'): FinishedJob => ({ id: String(++serial), user, partition, name, elapsedMs: minutes * MIN });

describe('run-time estimates', () => {
  it('takes the 90th percentile of the same user, partition and name, capped at the time limit', () => {
    const h = new RunTimeHistory();
    // One runaway job of ten does not move it.
    h.add([10, 11, 11, 12, 12, 12, 13, 13, 14, 300].map((m) => done('ana', 'reco', m)).concat(done('ana', 'sim', 50)));
    const job = { user: 'ana', partition: 'hybrid', name: 'reco', timeLimitMs: 240 * MIN };
    expect(QUANTILE).toBe(0.9);
    expect(estimateRunTime(job, h.summary(), 60 * MIN)).toEqual({ ms: 14 * MIN, source: 'learned', jobs: 10 });
    expect(estimateRunTime({ ...job, timeLimitMs: 5 * MIN }, h.summary(), 60 * MIN)).toEqual({ ms: 5 * MIN, source: 'learned', jobs: 10 });
    expect(estimateText(estimateRunTime(job, h.summary(), 60 * MIN))).toBe('learned from 10 jobs');
  });

  it('falls back to the user and partition, then the time limit, then the configured runtime', () => {
    const h = new RunTimeHistory();
    h.add([done('ana', 'reco', 10), done('ana', 'reco', 20), done('ana', 'sim', 30), done('bob', 'x', 5), done('bob', 'x', 5)]);
    // ana/new: none of that name, three of the user's in the partition (10, 20, 30 min).
    expect(estimateRunTime({ user: 'ana', partition: 'hybrid', name: 'new' }, h.summary(), 60 * MIN)).toEqual({ ms: 30 * MIN, source: 'learned', jobs: 3 });
    // bob has only two finished jobs: fewer than MIN_JOBS say nothing.
    expect(MIN_JOBS).toBe(3);
    expect(estimateRunTime({ user: 'bob', partition: 'hybrid', name: 'x', timeLimitMs: 30 * MIN }, h.summary(), 60 * MIN)).toEqual({ ms: 30 * MIN, source: 'time limit' });
    expect(estimateRunTime({ user: 'bob', partition: 'hybrid', name: 'x' }, h.summary(), 60 * MIN)).toEqual({ ms: 60 * MIN, source: 'configured' });
    // Another partition's history is another machine's.
    expect(estimateRunTime({ user: 'ana', partition: 'gpu', name: 'reco' }, h.summary(), 60 * MIN).source).toBe('configured');
    expect(estimateRunTime({ partition: 'hybrid' }, h.summary(), 60 * MIN).source).toBe('configured');
  });

  it('counts a job read twice once and keeps the last runs of a key', () => {
    const h = new RunTimeHistory();
    const jobs = [done('ana', 'reco', 10), done('ana', 'reco', 10), done('ana', 'reco', 10)];
    expect(h.add(jobs)).toBe(3);
    expect(h.add(jobs)).toBe(0);
    expect(h.summary().get('ana\nhybrid\nreco')).toEqual({ ms: 10 * MIN, jobs: 3 });
    h.add(Array.from({ length: KEPT }, () => done('ana', 'reco', 40)));
    expect(h.summary().get('ana\nhybrid\nreco')).toEqual({ ms: 40 * MIN, jobs: KEPT });
  });
});

describe('taking jobs back', () => {
  it('removes a job\'s runs and id as if it had never been added, and a key left empty', () => {
    const h = new RunTimeHistory();
    const jobs = [done('ana', 'reco', 10), done('ana', 'reco', 12), done('ana', 'reco', 59), done('ana', 'reco', 11), done('bob', 'x', 5)];
    h.add(jobs);
    const once = new RunTimeHistory();
    once.add(jobs.filter((j) => j !== jobs[2] && j !== jobs[4]));
    // One id that is not there and one of another user's name change nothing.
    h.remove([{ id: jobs[2]!.id, user: 'ana' }, { id: jobs[4]!.id, user: 'bob' }, { id: 'nope', user: 'ana' }]);
    expect(h.size).toBe(once.size);
    expect(h.summary()).toEqual(once.summary());
    expect(h.summary().get('ana\nhybrid\nreco')).toEqual({ ms: 12 * MIN, jobs: 3 });
    expect([...h.summary().keys()].some((k) => k.startsWith('bob\n'))).toBe(false);
    // Taken back, an id may come again (a whole read gives it once).
    expect(h.add([jobs[2]!])).toBe(1);
  });
});

describe('sacct --parsable2 as hostile input', () => {
  it('reads the database and the completion log forms, the job name last', () => {
    const text = [
      '101|COMPLETED|600|ana|hybrid|reco|101',
      '102|TIMEOUT|3600|ana(1001)|hybrid|a|b|c|102',
      '103|CANCELLED by 0|5|ana|hybrid|reco|103',
      '104|FAILED|1|ana|hybrid|reco|104',
      '105|COMPLETED|60|ana|other|reco|105',
      '',
    ].join('\n');
    expect(parseSacct(text, ['hybrid'])).toEqual({
      jobs: [
        { id: '101', user: 'ana', partition: 'hybrid', name: 'reco', elapsedMs: 600_000 },
        { id: '102', user: 'ana', partition: 'hybrid', name: 'a|b|c', elapsedMs: 3_600_000 },
      ],
      skipped: 0,
    });
  });

  it('skips and counts what is not a record as Slurm prints one', () => {
    const text = [
      '106|COMPLETED|-5|ana|hybrid|x|106', // negative run time
      '107|COMPLETED|99999999999|ana|hybrid|x|107', // beyond a year
      'x108|COMPLETED|60|ana|hybrid|x|x108', // not a job id
      '109|COMPLETED|60|an a|hybrid|x|109', // a user name with a space
      '110|COMPLETED|60|ana|hybrid|110', // too few fields
      'half of a name with a newline|x',
      '111|completed;rm|60|ana|hybrid|x|111', // a state as no Slurm prints it
      '112|COMPLETED|60|ana|hybrid|' + 'n'.repeat(10_000) + '|112',
      '113|COMPLETED|60|ana|hybrid|x|114', // the job id asked again differs: a line a name wrote
    ].join('\n');
    const r = parseSacct(text, ['hybrid']);
    expect(r.skipped).toBe(8);
    expect(r.jobs).toHaveLength(1);
    expect(r.jobs[0]!.name).toHaveLength(200);
  });

  it('with a delimiter made for the read, no line a job name wrote is a record, however many newlines it holds', () => {
    const d = '|4f1c2a|';
    // mallory's job 601, named `x\n90001|COMPLETED|1|alice|hybrid|train|90001\n90002|...|90002`:
    // the name's lines use `|`, the only delimiter a name written before the read can know.
    const name = 'x\n90001|COMPLETED|1|alice|hybrid|train|90001\n90002|COMPLETED|1|alice|hybrid|train|90002';
    const text = [`500${d}COMPLETED${d}3600${d}alice${d}hybrid${d}train${d}500`, `601${d}COMPLETED${d}5${d}mallory${d}hybrid${d}${name}${d}601`].join('\n');
    const r = parseSacct(text, ['hybrid'], d);
    expect(r.jobs.map((j) => `${j.id} ${j.user}`)).toEqual(['500 alice']);
    expect(r.skipped).toBe(3);
  });

  it('in the completion log, distrusts every line after a record cut by a newline in its name', () => {
    // The log record `JobId=2 UserId=root(0) … Name=x` ends at the name's newline: sacct -c
    // prints it with no state and no partition; the lines after it may be the name's text.
    const text = ['1|COMPLETED|0|root(0)|hybrid|plain|1', '2||0|root(0)||x|2', '424242|COMPLETED|1|nobody(65534)|hybrid|train|424242', '3|COMPLETED|0|root(0)|hybrid|after|3'].join('\n');
    expect(parseSacct(text, ['hybrid'])).toEqual({ jobs: [{ id: '1', user: 'root', partition: 'hybrid', name: 'plain', elapsedMs: 0 }], skipped: 3, cut: true });
  });
});

describe('home cores from sinfo --json', () => {
  const doc = (nodes: object[]) => JSON.stringify({ nodes, errors: [] });
  it('counts the served partitions\' home nodes that take jobs, not drones, drained or down ones', () => {
    const json = doc([
      { name: 'h1', state: 'mixed', cpus: 8, alloc_cpus: 6, real_memory: 16000, partitions: ['hybrid'] },
      { name: 'h2', state: 'idle', cpus: 4, alloc_cpus: 0, real_memory: 8000, partitions: ['hybrid'] },
      { name: 'h3', state: 'idle', state_flags: ['DRAIN'], cpus: 32, alloc_cpus: 0, real_memory: 1, partitions: ['hybrid'] },
      { name: 'h4', state: 'down', cpus: 32, alloc_cpus: 0, real_memory: 1, partitions: ['hybrid'] },
      { name: 'g1', state: 'idle', cpus: 64, alloc_cpus: 0, real_memory: 1, partitions: ['gpu'] },
      { name: 'est-aws-1', state: 'idle', cpus: 2, alloc_cpus: 0, real_memory: 1, partitions: ['hybrid'] },
      { name: 'ph', state: 'future', cpus: 2, alloc_cpus: 0, real_memory: 1, partitions: ['hybrid'] },
    ]);
    expect(homeView(json, 'est-', ['hybrid'])).toEqual({ cores: 12, idleCores: 6, nodeCores: 8, nodeMemoryMb: 16000 });
    expect(homeView(doc([]), 'est-', ['hybrid'])).toBeUndefined();
  });
});

describe('sacct --starttime', () => {
  it('is written in local time, as sacct reads it', () => {
    const tz = process.env.TZ;
    try {
      process.env.TZ = 'Asia/Tokyo';
      expect(localTime(Date.UTC(2026, 0, 5, 12, 30, 15))).toBe('2026-01-05T21:30:15');
      process.env.TZ = 'UTC';
      expect(localTime(Date.UTC(2026, 0, 5, 12, 30, 15))).toBe('2026-01-05T12:30:15');
    } finally {
      if (tz === undefined) delete process.env.TZ;
      else process.env.TZ = tz;
    }
  });
});
