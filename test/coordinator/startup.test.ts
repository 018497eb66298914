// `estuary coordinator` as a process, at its edges: a slurm-conf it cannot read stops start-up
// with squeue's own words (exit 2); the status says "not yet read" until Slurm has answered
// once; and SIGINT ends it within its shutdown deadline even while squeue hangs, leaving no
// program behind.

import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runProgram } from '../../coordinator/proc.ts';
import { NODE, startChild } from '../helpers/process.ts';

const BIN = new URL('../../bin/estuary.js', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'estuary-co-start-'));

function config(batch: string): string {
  const path = join(dir, `c${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(
    path,
    `coordinator:
  listen: 127.0.0.1:0
  state-dir: ${dir}/state-${Math.random().toString(36).slice(2)}
  interval: 1s
  batch-system: ${batch}
  machine-types:
    small: {cores: 2, memory: 1GiB}
  sites:
    cloud: {adapter: command, quota: 1, machine-types: [small], command: {start: 'true', stop: 'true', status: 'echo deleted'}}
`,
  );
  return path;
}

describe('estuary coordinator start and stop', () => {
  it('refuses a slurm-conf it cannot read, in squeue\'s words, with exit 2', async () => {
    const r = await runProgram(NODE, [BIN, 'coordinator', '--config', config(`{type: slurm, partitions: [hybrid], slurm-conf: ${dir}/missing.conf}`)], { timeoutMs: 20_000 });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/batch-system\.slurm-conf: cannot read .*missing\.conf: .*cannot stat file .*missing\.conf/);
  }, 30_000);

  it('says "not yet read" until Slurm answers, and SIGINT ends it within its deadline while squeue hangs', async () => {
    const bin = join(dir, 'bin');
    await runProgram('mkdir', ['-p', bin]);
    for (const p of ['squeue', 'sinfo']) {
      writeFileSync(join(bin, p), '#!/bin/sh\nsleep 31.4159 & sleep 31.4159\n');
      chmodSync(join(bin, p), 0o755);
    }
    const child = startChild(NODE, [BIN, 'coordinator', '--config', config(`{type: slurm, partitions: [hybrid], bin-dir: ${bin}}`), '--shutdown-timeout', '2s', '--log-format', 'json']);
    onTestFinished(() => child.stop('SIGKILL').then(() => undefined));
    const port = Number((await child.waitFor(/"port":(\d+)/, 20_000))[1]);
    const status = (await (await fetch(`http://127.0.0.1:${port}/api/v1/status`)).json()) as { batch: string; batchHealthy: boolean };
    expect(status).toMatchObject({ batch: 'not yet read', batchHealthy: false });
    await new Promise((r) => setTimeout(r, 500));
    const t0 = Date.now();
    child.proc.kill('SIGINT');
    const code = await child.exited;
    const took = Date.now() - t0;
    expect(code).toBe(0);
    // The 2 s deadline, plus starting to exit on a loaded machine; squeue alone would hold it 30 s.
    expect(took).toBeLessThan(2000 + 2500);
    const ps = await runProgram('ps', ['-eo', 'args']);
    expect(ps.stdout.split('\n').filter((l) => l.includes('31.4159'))).toEqual([]);
  }, 30_000);
});
