// Slurm 22.05's JSON and the job-input convention, read without a cluster. The records are cut
// from what `squeue --json` and `sinfo --json` printed on this machine.

import { describe, expect, it } from 'vitest';
import { nodeStatus, parseConstraint, parseInputs, parseNodes, parseOutputs, parsePending, parseQueue, timeLimitMs } from '../../coordinator/batch/slurm-parse.ts';

const job = (o: object) => ({
  job_id: 7,
  job_state: 'PENDING',
  state_reason: 'Resources',
  partition: 'hybrid',
  cpus: 2,
  memory_per_node: null,
  memory_per_cpu: 100,
  features: '',
  comment: '',
  submit_time: 1795462100,
  ...o,
});

describe('squeue --json', () => {
  it('lists running jobs with their node and start time; a start of 0 or garbage is none, a job on several nodes is not listed', () => {
    const run = (o: object) => job({ job_state: 'RUNNING', user_name: 'ana', name: 'reco', time_limit: 120, nodes: 'es-aws-1', ...o });
    const q = parseQueue(
      JSON.stringify({
        jobs: [
          run({ job_id: 1, start_time: 1795462200 }),
          run({ job_id: 2, start_time: 0, nodes: 'c1' }),
          run({ job_id: 3, start_time: 'soon' }),
          run({ job_id: 4, start_time: 99_999_999_999 }),
          run({ job_id: 5, start_time: 1795462200, nodes: 'es-aws-[1-2]' }),
          run({ job_id: 6, start_time: 1795462200, partition: 'other' }),
        ],
      }),
      ['hybrid'],
      'es-',
    );
    expect(q.running).toEqual([
      { node: 'es-aws-1', cpus: 2, partition: 'hybrid', user: 'ana', name: 'reco', timeLimitMs: 7_200_000, startedAt: 1795462200_000 },
      { node: 'c1', cpus: 2, partition: 'hybrid', user: 'ana', name: 'reco', timeLimitMs: 7_200_000 },
      { node: 'es-aws-1', cpus: 2, partition: 'hybrid', user: 'ana', name: 'reco', timeLimitMs: 7_200_000 },
      { node: 'es-aws-1', cpus: 2, partition: 'hybrid', user: 'ana', name: 'reco', timeLimitMs: 7_200_000 },
    ]);
    expect(q).toMatchObject({ runningOnDrones: 4, runningAtHome: 1 });
  });

  it('keeps pending jobs of the served partitions that lack resources', () => {
    const text = JSON.stringify({
      jobs: [
        job({}),
        job({ job_id: 8, job_state: 'RUNNING' }),
        job({ job_id: 9, job_state: 'FAILED' }),
        job({ job_id: 10, partition: 'other' }),
        job({ job_id: 11, partition: 'other,hybrid' }),
        job({ job_id: 12, state_reason: 'JobHeldUser' }),
        job({ job_id: 13, state_reason: 'Dependency' }),
        job({ job_id: 14, state_reason: 'Priority' }),
      ],
    });
    const p = parsePending(text, ['hybrid']);
    expect(p.map((j) => j.id)).toEqual(['7', '11', '14']);
    expect(p[0]).toEqual({
      id: '7',
      partition: 'hybrid',
      cpus: 2,
      memoryMb: 200,
      constraints: [],
      inputs: [],
      submittedAt: 1795462100_000,
      reason: 'Resources',
    });
  });
  it('reads memory per node, and numbers in the {set, number} form of later releases', () => {
    const p = parsePending(
      JSON.stringify({ jobs: [job({ memory_per_node: { set: true, number: 4000 }, cpus: { set: true, number: 4 } })] }),
      ['hybrid'],
    );
    expect(p[0]).toMatchObject({ cpus: 4, memoryMb: 4000 });
  });
});

describe('constraints', () => {
  it('splits AND groups and OR alternatives, dropping brackets and counts', () => {
    expect(parseConstraint('cloud&site_aws')).toEqual([['cloud'], ['site_aws']]);
    expect(parseConstraint('[site_a|site_b]&big*2')).toEqual([['site_a', 'site_b'], ['big']]);
    expect(parseConstraint('')).toEqual([]);
    expect(parseConstraint(null)).toEqual([]);
  });
});

describe('declared inputs (--comment "estuary-inputs=...")', () => {
  it('reads URLs with optional sizes among other comment text', () => {
    expect(parseInputs('run 42; estuary-inputs=s3://kek/run42@40GB,https://x.org/a.root@1.5GiB,cvmfs://atlas.cern.ch tag')).toEqual([
      { url: 's3://kek/run42', bytes: 40e9 },
      { url: 'https://x.org/a.root', bytes: 1.5 * 1024 ** 3 },
      { url: 'cvmfs://atlas.cern.ch' },
    ]);
  });
  it('leaves an @ that is not a size in the URL, and ignores comments without the token', () => {
    expect(parseInputs('estuary-inputs=http://user@host/x')).toEqual([{ url: 'http://user@host/x' }]);
    expect(parseInputs('just a note')).toEqual([]);
    expect(parseInputs('notestuary-inputs=s3://x')).toEqual([]);
  });
});

describe('declared outputs and time limits', () => {
  it('sums estuary-outputs sizes, bare or after a URL', () => {
    expect(parseOutputs('estuary-inputs=s3://x/a estuary-outputs=250MB')).toBe(250e6);
    expect(parseOutputs('estuary-outputs=s3://home/r1@1GB,s3://home/r2@0.5GB')).toBe(1.5e9);
    expect(parseOutputs('estuary-outputs=s3://home/r1')).toBe(0);
    expect(parseOutputs('nothing')).toBeUndefined();
  });
  it('reads --time in minutes; UNLIMITED and NO_VAL are no limit', () => {
    expect(timeLimitMs(20)).toBe(1_200_000);
    expect(timeLimitMs({ set: true, infinite: false, number: 30 })).toBe(1_800_000);
    expect(timeLimitMs({ set: true, infinite: true, number: 0 })).toBeUndefined();
    expect(timeLimitMs(4294967295)).toBeUndefined();
    expect(timeLimitMs(4294967294)).toBeUndefined();
    expect(timeLimitMs(undefined)).toBeUndefined();
  });
});

describe('sinfo --json', () => {
  it('maps state and flags to the drone view', () => {
    expect(nodeStatus({ name: 'a', state: 'idle', state_flags: ['DYNAMIC_NORM'] })).toBe('available');
    expect(nodeStatus({ name: 'a', state: 'mixed', state_flags: ['DRAIN', 'DYNAMIC_NORM'], alloc_cpus: 1 })).toBe('draining');
    expect(nodeStatus({ name: 'a', state: 'idle', state_flags: ['DRAIN'], alloc_cpus: 0 })).toBe('drained');
    expect(nodeStatus({ name: 'a', state: 'down', state_flags: ['NOT_RESPONDING'] })).toBe('down');
    expect(nodeStatus({ name: 'a', state: 'allocated' })).toBe('available');
  });
  it('keeps only nodes under the prefix', () => {
    const text = JSON.stringify({
      nodes: [
        { name: 'home1', state: 'idle', cpus: 1 },
        { name: 'es-cloud-1', state: 'mixed', cpus: 2, alloc_cpus: 1, real_memory: 1000, alloc_memory: 100 },
      ],
    });
    expect([...parseNodes(text, 'es-')]).toEqual([
      ['es-cloud-1', { status: 'available', cpus: 2, allocCpus: 1, memoryMb: 1000, allocMemoryMb: 100 }],
    ]);
  });
});

describe('home features', () => {
  it('are those every home node of the served partitions carries; drones and placeholders are not home', async () => {
    const { homeFeatures } = await import('../../coordinator/batch/slurm-parse.ts');
    const node = (name: string, features: string, o: object = {}) => ({ name, state: 'idle', features, partitions: ['hybrid'], ...o });
    const text = JSON.stringify({
      nodes: [
        node('home1', 'home,x86,ib'),
        node('home2', 'x86,home'),
        node('gpu1', 'gpu', { partitions: ['gpu'] }),
        node('es-cloud-1', 'estuary,site_cloud'),
        node('placeholder', 'estuary,site_cloud,home', { state: 'future' }),
      ],
    });
    expect(homeFeatures(text, 'es-', ['hybrid'])).toEqual(['home', 'x86']);
    expect(homeFeatures(JSON.stringify({ nodes: [node('es-cloud-1', 'x')] }), 'es-', ['hybrid'])).toEqual([]);
  });
});
