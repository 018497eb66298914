// A job's comment is written by any batch user; estuary's policy quotes the input it declares in
// the sentence it logs. In the pretty log format (the default on a terminal) that sentence is
// the message itself, printed as is: no control character from a comment may reach the admin's
// terminal, as `coordinator status` already guarantees for the same sentence.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { NODE, startChild } from '../../helpers/process.ts';
import { fakeSlurm, pendingJob, sleep } from './coordinator-fake-slurm.ts';

afterAll(runTeardowns);

const ROOT = join(import.meta.dirname, '..', '..', '..');

test('an escape sequence in a job comment does not reach the pretty log', async () => {
  const slurm = fakeSlurm();
  slurm.setJobs([pendingJob(1201, { comment: 'estuary-inputs=s3://kek/\u001b]0;owned\u0007\u001b[2Jrun@1MB' })]);
  const config = join(slurm.dir, 'c.yaml');
  writeFileSync(
    config,
    `coordinator:
  listen: 127.0.0.1:0
  state-dir: ${slurm.dir}/state
  interval: 1s
  prefix: atk-
  controller: {type: estuary}
  storage:
    kek: {urls: ["s3://kek/"]}
  batch-system: {type: slurm, partitions: [hybrid], bin-dir: ${slurm.bin}, timeout: 5s}
  machine-types:
    small: {cores: 1, memory: 500MiB}
  sites:
    cloud:
      adapter: command
      quota: 1
      machine-types: [small]
      command: {start: "echo ID=1", stop: "true", status: "echo booting", timeout: 5s}
`,
  );
  const c = startChild(NODE, [join(ROOT, 'bin', 'estuary.js'), 'coordinator', '--config', config, '--log-format', 'pretty'], { cwd: ROOT });
  await c.waitFor(/starting drone|pending job/, 15_000);
  await sleep(1500);
  const out = c.output();
  expect(out).toContain('kek');
  expect(out.replace(/\n/g, ''), out.split('\n').filter((l) => l.includes('kek')).join('\n').replace(/\u001b/g, '<ESC>')).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
}, 30_000);
