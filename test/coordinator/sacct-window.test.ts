// A first read of a week of sacct that times out (a busy site's week is more than sacct answers
// within `batch-system.timeout`) is not asked again as it was: the window shrinks, and once a read
// answers, the older days are read in slices until the week is covered — said in the status. A
// sacct script stands in for Slurm's: it answers a window of at most two days at once and hangs
// on a longer one, and logs each window asked.

import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { SlurmBatch } from '../../coordinator/batch/slurm.ts';
import type { Clock } from '../../coordinator/clock.ts';
import { RunHistory } from '../../coordinator/run-history.ts';
import { historyText } from '../../coordinator/status/view.ts';
import { runTeardowns } from '../helpers/cleanup.ts';
import { tempDir } from '../helpers/tmp.ts';

afterAll(runTeardowns);

describe('a first sacct read that times out', () => {
  it('is asked again over a shorter window, then the older days in slices, until the week is read', async () => {
    const dir = await tempDir('estuary-sacct-window-');
    // Prints one finished job per answered window (its id: the window's start), hangs on more than two days.
    writeFileSync(
      join(dir, 'sacct'),
      `#!/bin/bash
for a in "$@"; do case "$a" in --starttime=*) s="\${a#--starttime=}";; --endtime=*) e="\${a#--endtime=}";; --delimiter=*) d="\${a#--delimiter=}";; esac; done
from=$(date -d "$s" +%s); if [ "$e" = now ]; then to=$(date +%s); else to=$(date -d "$e" +%s); fi
span=$(( (to - from + 1800) / 3600 ))
if [ $span -gt 48 ]; then echo "$span timed-out" >> ${dir}/calls; exec sleep 30; fi
echo "$span" >> ${dir}/calls
echo "\${from}\${d}COMPLETED\${d}60\${d}alice\${d}hybrid\${d}train\${d}\${from}"
`,
    );
    chmodSync(join(dir, 'sacct'), 0o755);
    const batch = new SlurmBatch({ type: 'slurm', partitions: ['hybrid'], binDir: dir, timeout: 1000, history: 'accounting', historyEvery: 0 });
    const clock: Clock = { now: () => Date.now(), sleep: (ms) => new Promise((r) => setTimeout(r, ms)) };
    const history = new RunHistory(batch, clock, pino({ level: 'silent' }), 0);

    await history.refresh();
    expect(history.status).toMatchObject({ jobs: 0, coveredS: 0, narrowedS: 3.5 * 86_400 });
    expect(history.status.error).toMatch(/^batch system: sacct failed: sacct: no answer in 1000 ms/);
    expect(historyText(history.status)).toMatch(/; a read of finished jobs timed out or answered too much: asking 3.5 days at a time$/);
    await history.refresh();
    await history.refresh();
    expect(history.status).toMatchObject({ jobs: 1, error: null, narrowedS: 3.5 * 86_400 });
    expect(history.status.coveredS).toBeCloseTo(1.75 * 86_400, -2);
    expect(historyText(history.status)).toBe('learned from 1 finished job (Slurm accounting (sacct)); a read of finished jobs timed out or answered too much: asking 3.5 days at a time, 1.8 days of 7 days read so far');
    for (let i = 0; i < 12 && history.status.coveredS < 7 * 86_400; i++) await history.refresh();
    expect(history.status).toMatchObject({ coveredS: 7 * 86_400, narrowedS: null, error: null });
    // Hours asked for: the week and 3.5 days time out, 1.75 days answer, then the new jobs (0 h)
    // between older slices of 84 h (times out), 42 h, 84 h (times out), 42 h and the last 42 h.
    const calls = readFileSync(join(dir, 'calls'), 'utf8').trim().split('\n');
    expect(calls).toEqual(['168 timed-out', '84 timed-out', '42', '84 timed-out', '0', '42', '0', '84 timed-out', '0', '42', '0', '42']);
  }, 30_000);
});
