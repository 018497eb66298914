// Every config mistake is a one-line error naming the key (exit 2). These values start a
// coordinator that can never work, or one that silently uses another value than written.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { NODE } from '../../helpers/process.ts';

afterAll(runTeardowns);

const ROOT = join(import.meta.dirname, '..', '..', '..');

function run(edit: (yaml: string) => string): { code: number | null; out: string } {
  const dir = mkdtempSync(join(tmpdir(), 'estuary-atk-cfg-'));
  onTeardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'bin'));
  for (const [name, body] of [['squeue', '{"jobs":[],"errors":[]}'], ['sinfo', '{"nodes":[],"errors":[]}']])
    writeFileSync(join(dir, 'bin', name!), `#!/bin/sh\necho '${body}'\n`, { mode: 0o755 });
  const config = join(dir, 'c.yaml');
  writeFileSync(
    config,
    edit(`coordinator:
  listen: 127.0.0.1:0
  state-dir: ${dir}/state
  interval: 1s
  prefix: atk-
  batch-system: {type: slurm, partitions: [hybrid], bin-dir: ${dir}/bin, timeout: 5s}
  machine-types:
    small: {cores: 1, memory: 500MiB}
  sites:
    cloud:
      adapter: command
      quota: 1
      machine-types: [small]
      command: {start: "echo ID=1", stop: "true", status: "echo booting", timeout: 5s}
`),
  );
  const r = spawnSync(NODE, [join(ROOT, 'bin', 'estuary.js'), 'coordinator', '--config', config, '--log-format', 'json'], { cwd: ROOT, encoding: 'utf8', timeout: 3000, killSignal: 'SIGKILL' });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

test.each([
  ['batch-system.timeout: 0s (every read "no answer in 0 ms")', (y: string) => y.replace('/bin, timeout: 5s', '/bin, timeout: 0s'), /timeout/],
  ['a command site timeout of 0s (every call fails at once)', (y: string) => y.replace('status: "echo booting", timeout: 5s', 'status: "echo booting", timeout: 0s'), /timeout/],
  ['batch-system.bin-dir that does not exist (squeue ENOENT every interval)', (y: string) => y.replace(/bin-dir: \S+\/bin,/, 'bin-dir: /nonexistent-estuary-bin,'), /bin-dir/],
  ['prefix: "" (silently runs as es-)', (y: string) => y.replace('prefix: atk-', 'prefix: ""'), /prefix/],
])('%s stops start-up with one line naming the key', (_what, edit, key) => {
  const r = run(edit);
  expect(r.code, r.out.slice(0, 400)).toBe(2);
  expect(r.out.trim().split('\n')).toHaveLength(1);
  expect(r.out).toMatch(key);
});
