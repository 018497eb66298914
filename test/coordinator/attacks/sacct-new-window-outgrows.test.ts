// After slurmdbd was down, the read of the new jobs asks for everything since the last read that
// answered. docs/COORDINATOR.md ("Run times"): "A read of only the new jobs that times out is asked
// again as it was (its window is what is not read yet)". On a site whose first week had to be
// narrowed (sacct answers at most ~2 days in time), an outage of three days makes the window of
// new jobs three days long: it times out, is asked again as it was, times out again — for ever,
// since the window only grows. From then on no finished job is learned again until a restart,
// while the status shows one timeout after another.
//
// Here a stand-in sacct takes longer than `timeout` for any window over two days, answers within
// it otherwise (bob's job 777, which ends after the outage, in every answer reaching to now), and fails like a
// slurmdbd that is down while the test says so. Expected: once slurmdbd is back, the new jobs are
// learned within a few reads (the window of new jobs is narrowed like the first one: the most
// recent part read first, the rest in older slices), and the coordinator does not stay stuck.

import { chmodSync, existsSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
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
const DAY = 86_400_000;

const sacct = (down: string, ended: string): string => `#!/bin/bash
if [ -e ${down} ]; then echo "sacct: error: Problem talking to the database: Connection refused" >&2; exit 1; fi
for a in "$@"; do
  case "$a" in
    --delimiter=*) d="\${a#--delimiter=}" ;;
    --starttime=*) s="\${a#--starttime=}" ;;
    --endtime=*) e="\${a#--endtime=}" ;;
  esac
done
recent=0
if [ "$e" = now ]; then e=$(date +%Y-%m-%dT%H:%M:%S); recent=1; fi
span=$(( $(date -d "$e" +%s) - $(date -d "$s" +%s) ))
if [ "$span" -gt 172800 ]; then exec sleep 30; fi
base=$(date -d "$s" +%s)
for i in 1 2 3; do
  id=$(( base % 100000000 + i ))
  echo "\${id}\${d}COMPLETED\${d}600\${d}alice\${d}hybrid\${d}learn\${d}\${id}"
done
if [ "$recent" = 1 ] && [ -e ${ended} ]; then echo "777\${d}COMPLETED\${d}1200\${d}bob\${d}hybrid\${d}after-outage\${d}777"; fi
`;

test('after a three-day slurmdbd outage the new jobs are learned again, not timed out for ever', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'estuary-atk-sacct-'));
  onTeardown(() => rmSync(dir, { recursive: true, force: true }));
  const down = join(dir, 'down');
  const ended = join(dir, 'ended');
  writeFileSync(join(dir, 'sacct'), sacct(down, ended));
  chmodSync(join(dir, 'sacct'), 0o755);
  const batch = new SlurmBatch({ type: 'slurm', partitions: ['hybrid'], binDir: dir, timeout: 1000, history: 'accounting', historyEvery: EVERY });
  const clock = new VirtualClock();
  const history = new RunHistory(batch, clock, pino({ level: 'silent' }), EVERY);
  const read = async (ms = EVERY) => {
    clock.advance(ms);
    await history.refresh();
  };

  // The first week: 7 days and 3.5 time out, 1.75 answers.
  await history.refresh();
  await read();
  await read();
  expect(history.status.error).toBeNull();
  expect(history.status.jobs).toBeGreaterThan(0);

  // slurmdbd is down for three days.
  writeFileSync(down, '');
  await read();
  await read(DAY);
  await read(2 * DAY);
  expect(history.status.error).toMatch(/Connection refused/);
  // slurmdbd is back; bob's job 777 ends now.
  unlinkSync(down);
  expect(existsSync(down)).toBe(false);
  writeFileSync(ended, '');

  const errors: (string | null)[] = [];
  for (let n = 0; n < 8 && !history.summary().has('bob\nhybrid\nafter-outage'); n++) {
    await read();
    errors.push(history.status.error);
  }
  expect(errors, 'the reads after slurmdbd came back').toContain(null);
  expect(history.summary().get('bob\nhybrid\nafter-outage')).toEqual({ ms: 1_200_000, jobs: 1 });
});
