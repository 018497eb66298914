// sacct's answer read as records (coordinator/batch/slurm.ts): an answer in which no line holds
// the delimiter asked for — a wrapper, or a sacct that ignores --delimiter — is a failed read,
// not a week without finished jobs. A sacct script stands in for Slurm's.

import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SlurmBatch } from '../../coordinator/batch/slurm.ts';
import { runTeardowns } from '../helpers/cleanup.ts';
import { tempDir } from '../helpers/tmp.ts';

afterAll(runTeardowns);

async function batchAnswering(script: string): Promise<SlurmBatch> {
  const dir = await tempDir('estuary-sacct-answer-');
  writeFileSync(join(dir, 'sacct'), `#!/bin/bash\nfor a in "$@"; do case "$a" in --delimiter=*) d="\${a#--delimiter=}";; esac; done\n${script}\n`);
  chmodSync(join(dir, 'sacct'), 0o755);
  return new SlurmBatch({ type: 'slurm', partitions: ['hybrid'], binDir: dir, timeout: 5000, history: 'accounting', historyEvery: 60_000 });
}

describe('an answer of sacct', () => {
  it('where no line holds the delimiter asked for fails the read, saying so in one line', async () => {
    const batch = await batchAnswering(`echo '101|COMPLETED|600|alice|hybrid|learn|101'; echo '102|COMPLETED|600|alice|hybrid|learn|102'`);
    const err = await batch.finished(0).then(() => undefined, (e: Error) => e);
    expect(err?.message).toMatch(/^batch system: sacct failed: no line of its answer is split by the --delimiter asked for/);
    expect(err?.message.split('\n')).toHaveLength(1);
  });

  it('that is empty is a window without finished jobs, and one with the delimiter is read', async () => {
    expect(await (await batchAnswering('true')).finished(0)).toMatchObject({ jobs: [], skipped: 0 });
    const read = await (await batchAnswering(`echo "101\${d}COMPLETED\${d}600\${d}alice\${d}hybrid\${d}learn\${d}101"; echo 'garbage'`)).finished(0);
    expect(read).toMatchObject({ jobs: [{ id: '101', user: 'alice', elapsedMs: 600_000 }], skipped: 1 });
  });
});
