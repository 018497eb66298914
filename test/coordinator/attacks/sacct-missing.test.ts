// Attack: no sacct where the coordinator runs (squeue, sinfo and scontrol are there: a
// `bin-dir` with only the programs the docs require, or a client package without sacct).
// The status then says `NOT LEARNED: batch system: sacct --allusers failed: spawn
// /…/sacct ENOENT` — a Node error code, not what to do. docs/COORDINATOR.md, "Configuration":
// `bin-dir` is the "Directory of squeue, sinfo and scontrol"; docs/ERRORS.md: "the message is one
// line ... that says what went wrong and what to do" (and ESTUARY_CO_BATCH's fix, "check
// slurmctld, SLURM_CONF ...", does not fit a program that is not installed).
// Expected: the history error says sacct was not found (where it was looked for) and what to do
// (install it next to squeue, or `history: off`).

import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { SlurmBatch } from '../../../coordinator/batch/slurm.ts';
import { monotonicClock } from '../../../coordinator/clock.ts';
import { RunHistory } from '../../../coordinator/run-history.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';

afterAll(runTeardowns);

describe('sacct missing', () => {
  it('the history error says sacct is not there and what to do, not "spawn … ENOENT"', async () => {
    const dir = await tempDir('estuary-atk-sacct2-');
    for (const p of ['squeue', 'sinfo', 'scontrol']) {
      writeFileSync(join(dir, p), '#!/bin/sh\nexit 0\n');
      chmodSync(join(dir, p), 0o755);
    }
    const batch = new SlurmBatch({ type: 'slurm', partitions: ['hybrid'], binDir: dir, timeout: 10_000, history: 'auto', historyEvery: 300_000 });
    const history = new RunHistory(batch, monotonicClock(), pino({ level: 'silent' }), 300_000);
    await history.refresh();
    const error = history.status.error ?? '';
    expect(error).not.toMatch(/ENOENT|spawn/);
    expect(error).toMatch(/not found|no sacct|cannot find|not installed/i);
    expect(error).toMatch(/history: off|install/i);
  });
});
