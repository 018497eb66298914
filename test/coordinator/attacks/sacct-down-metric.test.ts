// Attack: slurmdbd down. sacct then exits 1 with "sacct: error: Problem talking to the database:
// Connection refused". docs/COORDINATOR.md, "When there is no history": "A read that fails
// later keeps what was learned and says so the same way" — i.e. `/api/v1/status` has
// `history.error` and `estuary_coordinator_run_time_history_up{source,error}` "is 0 with the
// words". The metric's label is the error cut at 200 characters, and the error starts with the
// whole sacct command line (its random 26-character delimiter, the format, the partitions and
// the start time), which alone is over 200 characters: the label holds none of sacct's words,
// and as the delimiter and start time change each read, it is a new series every read.
//
// Expected: the metric's error label says why the read failed (sacct's words, here "Problem
// talking to the database: Connection refused").

import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { fakeSlurm, sleep, startCoordinator } from './coordinator-fake-slurm.ts';

afterAll(runTeardowns);

describe('slurmdbd down: what the coordinator says', () => {
  it('the history metric names sacct\'s complaint, not only the command line', async () => {
    const slurm = fakeSlurm();
    writeFileSync(join(slurm.bin, 'sacct'), '#!/bin/sh\necho "sacct: error: Problem talking to the database: Connection refused" >&2\nexit 1\n');
    chmodSync(join(slurm.bin, 'sacct'), 0o755);
    const c = await startCoordinator(
      slurm,
      `    cloud:
      adapter: command
      quota: 2
      machine-types: [small]
      command: {start: "echo ID=1", stop: "true", status: "echo booting", timeout: 5s}
`,
      '  controller: {type: estuary}\n',
    );
    let error: string | null = null;
    for (let i = 0; i < 40 && !error; i++) {
      await sleep(250);
      error = ((await c.status()).history as { error: string | null } | null)?.error ?? null;
    }
    expect(error, 'the status says the read failed').toMatch(/Connection refused/);
    const metrics = await (await fetch(`${c.url}/metrics`)).text();
    const line = metrics.split('\n').find((l) => l.startsWith('estuary_coordinator_run_time_history_up{'));
    expect(line, 'the history metric is exported').toBeDefined();
    expect(line).toMatch(/ 0$/);
    // The words: why it failed, as the docs promise ("0 with the words").
    expect(line).toMatch(/Problem talking to the database|Connection refused/);
  }, 40_000);
});
