// A first read of a week of finished jobs is narrowed when it times out, because "a busy site's
// week can be more than slurmdbd answers in time" and asking the same week again fails again
// (docs/COORDINATOR.md, "Run times"). A busy site's week can also be more than the coordinator
// reads: sacct's answer is read up to 500 MiB, and a larger one fails with "output too large".
// That failure is not a timeout, so the window is never narrowed: every `history-every` asks for
// the same week again, moves 500 MiB through a pipe and fails again, for ever; nothing is ever
// learned, and the status says neither that the reads are narrowed nor how far they reach.
//
// Here a stand-in sacct answers more than 500 MiB for any window over two days, and three
// finished jobs for a narrower one. Expected: an answer too large to read is treated like one
// that took too long — the next read asks for half the span — so within three reads (7 days,
// 3.5, 1.75) the jobs are learned and the status says the reads are narrowed.

import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, expect, test } from 'vitest';
import { SlurmBatch } from '../../../coordinator/batch/slurm.ts';
import { VirtualClock } from '../../../coordinator/clock.ts';
import { RunHistory } from '../../../coordinator/run-history.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';

afterAll(runTeardowns);

const EVERY = 60_000;

const SACCT = `#!/bin/bash
for a in "$@"; do
  case "$a" in
    --delimiter=*) d="\${a#--delimiter=}" ;;
    --starttime=*) s="\${a#--starttime=}" ;;
    --endtime=*) e="\${a#--endtime=}" ;;
  esac
done
[ "$e" = now ] && e=$(date +%Y-%m-%dT%H:%M:%S)
span=$(( $(date -d "$e" +%s) - $(date -d "$s" +%s) ))
if [ "$span" -gt 172800 ]; then
  head -c 530000000 /dev/zero   # more than the 500 MiB read
  exit 0
fi
base=$(date -d "$s" +%s)
for i in 1 2 3; do
  id=$(( base % 100000000 + i ))
  echo "\${id}\${d}COMPLETED\${d}600\${d}alice\${d}hybrid\${d}learn\${d}\${id}"
done
`;

test('a week whose sacct answer is over 500 MiB is read in narrower windows, not asked whole for ever', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'estuary-atk-sacct-'));
  onTeardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'sacct'), SACCT);
  chmodSync(join(dir, 'sacct'), 0o755);
  const batch = new SlurmBatch({ type: 'slurm', partitions: ['hybrid'], binDir: dir, timeout: 20_000, history: 'accounting', historyEvery: EVERY });
  const clock = new VirtualClock();
  const history = new RunHistory(batch, clock, pino({ level: 'silent' }), EVERY);

  const errors: (string | null)[] = [];
  for (let read = 0; read < 3 && history.status.jobs === 0; read++) {
    if (read) clock.advance(EVERY);
    await history.refresh();
    errors.push(history.status.error);
  }
  expect(errors[0]).toMatch(/output too large/);
  expect(history.status.error).toBeNull();
  expect(history.status.jobs).toBe(3);
  expect(history.summary().get('alice\nhybrid\nlearn')).toEqual({ ms: 600_000, jobs: 3 });
  expect(history.status.narrowedS).not.toBeNull();
  expect(history.status.coveredS).toBeGreaterThan(0);
  expect(history.status.coveredS).toBeLessThan(7 * 86_400);
});
