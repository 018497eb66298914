// JobCompLoc must name the file slurmctld writes. Pointed at a directory (`JobCompLoc=/var/log/slurm`,
// an easy mistake), a FIFO or a device, the read fails — rightly — but the one line says
// "... is not a regular file; let the coordinator's user read it": advice about permissions that
// cannot help, since the file can already be opened. docs/ERRORS.md (ESTUARY_CO_COMPLETION_LOG)
// says each such error is one line that says what to do; for this input, that is to point
// JobCompLoc at the file.
//
// Expected: the error names JobCompLoc as the setting to fix (point it at the completion log file
// slurmctld writes) and gives no permission advice.

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { SlurmBatch } from '../../../coordinator/batch/slurm.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';

afterAll(runTeardowns);

test.each(['directory', 'fifo', '/dev/zero'])('a JobCompLoc that is a %s gets advice that fits it', async (kind) => {
  const dir = mkdtempSync(join(tmpdir(), 'estuary-atk-colog-'));
  onTeardown(() => rmSync(dir, { recursive: true, force: true }));
  let loc = kind;
  if (kind === 'directory') mkdirSync((loc = join(dir, 'slurm')));
  if (kind === 'fifo') execFileSync('mkfifo', [(loc = join(dir, 'jobcomp.fifo'))]);
  const conf = join(dir, 'slurm.conf');
  writeFileSync(conf, `JobCompType=jobcomp/filetxt\nJobCompLoc=${loc}\n`);
  const batch = new SlurmBatch({ type: 'slurm', partitions: ['hybrid'], slurmConf: conf, timeout: 5000, history: 'completion', historyEvery: 60_000 });
  const err = await batch.finished(0).then(
    () => undefined,
    (e: Error & { code?: string }) => e,
  );
  expect(err?.code).toBe('ESTUARY_CO_COMPLETION_LOG');
  expect(err?.message).toContain(loc);
  expect(err?.message).toMatch(/not a regular file/);
  expect(err?.message).not.toMatch(/let the coordinator's user read it/);
  expect(err?.message).toMatch(/JobCompLoc/);
  expect(err?.message.split('\n')).toHaveLength(1);
});
