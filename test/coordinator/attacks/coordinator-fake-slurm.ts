// A coordinator run against stand-in Slurm programs (batch-system.bin-dir): squeue prints a file
// the test writes, sinfo one busy home node, scontrol logs its arguments. Cheap enough to try a
// hostile site script or job field without a private cluster.

import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTeardown } from '../../helpers/cleanup.ts';
import { NODE, startChild, type Child } from '../../helpers/process.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

export interface FakeSlurm {
  readonly dir: string;
  readonly bin: string;
  /** Replaces what squeue prints. */
  setJobs(jobs: readonly Record<string, unknown>[]): void;
  scontrolCalls(): string[];
}

export function pendingJob(id: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { job_id: id, job_state: 'PENDING', state_reason: 'Resources', partition: 'hybrid', cpus: 1, memory_per_node: 100, features: '', comment: '', time_limit: 10, submit_time: 1, ...extra };
}

export function fakeSlurm(): FakeSlurm {
  const dir = mkdtempSync(join(tmpdir(), 'estuary-atk-co-'));
  onTeardown(() => rmSync(dir, { recursive: true, force: true }));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  const script = (name: string, body: string) => {
    writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  };
  script('squeue', `cat ${dir}/squeue.json`);
  script(
    'sinfo',
    `echo '{"nodes":[{"name":"home1","state":"allocated","state_flags":[],"cpus":1,"alloc_cpus":1,"features":"home","partitions":["hybrid"]}],"errors":[]}'`,
  );
  script('scontrol', `echo "$*" >> ${dir}/scontrol.log`);
  const setJobs = (jobs: readonly Record<string, unknown>[]) => writeFileSync(join(dir, 'squeue.json'), JSON.stringify({ jobs, errors: [] }));
  setJobs([]);
  return {
    dir,
    bin,
    setJobs,
    scontrolCalls: () => (existsSync(join(dir, 'scontrol.log')) ? readFileSync(join(dir, 'scontrol.log'), 'utf8').split('\n').filter(Boolean) : []),
  };
}

export interface Running {
  readonly child: Child;
  readonly url: string;
  status(): Promise<Record<string, unknown>>;
}

/** Writes `coordinator:` + body (indented by the caller) and starts `estuary coordinator`. */
export async function startCoordinator(slurm: FakeSlurm, sitesYaml: string, extra = '', name = 'c', stateDir = `${slurm.dir}/state-${name}`): Promise<Running> {
  const config = join(slurm.dir, `${name}.yaml`);
  writeFileSync(
    config,
    `coordinator:
  listen: 127.0.0.1:0
  state-dir: ${stateDir}
  interval: 1s
  boot-timeout: 20s
  idle-time: 2s
  prefix: atk-
  batch-system: {type: slurm, partitions: [hybrid], bin-dir: ${slurm.bin}, timeout: 5s}
  machine-types:
    small: {cores: 1, memory: 500MiB}
${extra}  sites:
${sitesYaml}`,
  );
  const child = startChild(NODE, [join(ROOT, 'bin', 'estuary.js'), 'coordinator', '--config', config, '--log-format', 'json'], { cwd: ROOT });
  const m = await child.waitFor(/"port":(\d+)[^\n]*coordinator listening/, 20_000);
  const url = `http://127.0.0.1:${m[1]}`;
  return {
    child,
    url,
    status: async () => (await (await fetch(`${url}/api/v1/status`)).json()) as Record<string, unknown>,
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
