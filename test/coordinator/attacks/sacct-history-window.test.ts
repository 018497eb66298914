// Attack: the wall clock is stepped back while the coordinator runs (NTP's makestep after a VM
// resumes, `date -s`). The daemon's clock is "the wall clock at start moved on by the monotonic
// clock" (docs/COORDINATOR.md, tenet 3), so after a step back of an hour it runs an hour ahead of
// the wall clock that slurmdbd and sacct use. RunHistory passes that clock to sacct as
// `--starttime` (the last read minus 10 minutes, coordinator/run-history.ts): every read after the
// step asks for jobs from 50 minutes in the future, so no job that finishes is learned until a
// restart (and a step of more than the 10-minute overlap loses the jobs between reads).
//
// Expected (docs, "What Slurm must provide"): later reads cover "from 10 minutes before the last
// one" — the last one as Slurm counts time. A `--starttime` sent to sacct is never later than
// sacct's own now.

import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { SlurmBatch } from '../../../coordinator/batch/slurm.ts';
import type { Clock } from '../../../coordinator/clock.ts';
import { RunHistory } from '../../../coordinator/run-history.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';

afterAll(runTeardowns);

describe('sacct\'s time window after a step of the wall clock', () => {
  it('a read after the wall clock stepped back an hour does not ask sacct for jobs from the future', async () => {
    const dir = await tempDir('estuary-atk-sacct2-');
    // Logs each --starttime with the wall clock at the call, prints no job.
    writeFileSync(join(dir, 'sacct'), `#!/bin/sh\nfor a in "$@"; do case "$a" in --starttime=*) echo "\${a#--starttime=} $(date +%Y-%m-%dT%H:%M:%S)" >> ${dir}/calls;; esac; done\nexit 0\n`);
    chmodSync(join(dir, 'sacct'), 0o755);
    const batch = new SlurmBatch({ type: 'slurm', partitions: ['hybrid'], binDir: dir, timeout: 10_000, history: 'accounting', historyEvery: 0 });
    // The daemon started while the wall clock was an hour fast; NTP then stepped it back.
    const stepped: Clock = { now: () => Date.now() + 3_600_000, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) };
    const history = new RunHistory(batch, stepped, pino({ level: 'silent' }), 0);
    await history.refresh();
    await history.refresh();
    const calls = readFileSync(join(dir, 'calls'), 'utf8').trim().split('\n').map((l) => l.split(' ') as [string, string]);
    expect(calls).toHaveLength(2);
    const [since, wallNow] = calls[1]!;
    // Both in sacct's local time, same format: compared as text.
    expect(since <= wallNow, `second read asks --starttime=${since} while sacct's clock says ${wallNow}`).toBe(true);
  });
});
