// One coordinator per registry. The lock is a file holding the owner's PID, judged by that PID,
// and a PID is not a process identity: two coordinators in containers sharing the state volume
// both run as the same PID (here: PID 1 of their own PID namespaces, as `docker run` starts
// them). The second must still be refused, or both start drones on one quota.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { NODE, startChild } from '../../helpers/process.ts';

afterAll(runTeardowns);

const ROOT = join(import.meta.dirname, '..', '..', '..');

test('a second coordinator with the same PID in another PID namespace is refused the registry', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'estuary-atk-lock-'));
  onTeardown(() => rmSync(dir, { recursive: true, force: true }));
  // A batch system that answers nothing: neither coordinator has anything to do but hold the lock.
  writeFileSync(join(dir, 'squeue'), '#!/bin/sh\necho \'{"jobs":[],"errors":[]}\'\n', { mode: 0o755 });
  writeFileSync(join(dir, 'sinfo'), '#!/bin/sh\necho \'{"nodes":[],"errors":[]}\'\n', { mode: 0o755 });
  writeFileSync(join(dir, 'scontrol'), '#!/bin/sh\ntrue\n', { mode: 0o755 });
  const config = join(dir, 'c.yaml');
  writeFileSync(
    config,
    `coordinator:
  listen: 127.0.0.1:0
  state-dir: ${dir}/state
  interval: 1s
  prefix: lk-
  batch-system: {type: slurm, partitions: [hybrid], bin-dir: ${dir}, timeout: 5s}
  machine-types:
    small: {cores: 1, memory: 500MiB}
  sites:
    cloud:
      adapter: command
      quota: 1
      machine-types: [small]
      command: {start: "true", stop: "true", status: "echo deleted"}
`,
  );
  const run = () =>
    startChild('unshare', ['--pid', '--fork', '--kill-child', '--mount-proc', NODE, join(ROOT, 'bin', 'estuary.js'), 'coordinator', '--config', config, '--log-format', 'json'], { cwd: ROOT });
  const first = run();
  await first.waitFor(/coordinator listening/, 20_000);
  const second = run();
  const outcome = await Promise.race([
    second.exited.then((code) => `exited ${code}`),
    second.waitFor(/coordinator listening/, 20_000).then(
      () => 'second coordinator running on the same registry',
      () => second.exited.then((code) => `exited ${code}`),
    ),
  ]);
  expect(outcome, second.output().slice(-800)).toBe('exited 2');
  // ESTUARY_CO_REGISTRY_LOCKED's one line (the CLI prints an error's message, not its code).
  expect(second.output()).toMatch(/drone registry .* is in use by another coordinator/);
}, 40_000);
