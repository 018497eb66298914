// `history.coveredS` (and estuary_coordinator_run_time_history_covered_seconds) is "how far back
// the reads reach, 604800 once the week is read" (docs/COORDINATOR.md, "Status"), and the status
// says the reads are narrowed "until the week is covered". It is computed as now less the start of
// the oldest slice that answered, so time that passes while every read fails counts as read: a
// first read that answered 1.75 days, then five and a half days of a slurmdbd that is down, and
// the status drops "narrowed" and the metric says a whole week was read — though only the 1.75
// days before the outage ever were, and none of the last five and a half.
//
// Expected: coveredS counts only spans a read answered for; after the outage it stays below a
// week and the status still says the reads are narrowed (or the history is incomplete).

import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, afterEach, expect, test, vi } from 'vitest';
import { SlurmBatch } from '../../../coordinator/batch/slurm.ts';
import { VirtualClock } from '../../../coordinator/clock.ts';
import { RunHistory } from '../../../coordinator/run-history.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';

afterAll(runTeardowns);
afterEach(() => vi.restoreAllMocks());

const EVERY = 60_000;
const DAY = 86_400_000;

const sacct = (down: string): string => `#!/bin/bash
if [ -e ${down} ]; then echo "sacct: error: Problem talking to the database: Connection refused" >&2; exit 1; fi
for a in "$@"; do
  case "$a" in
    --delimiter=*) d="\${a#--delimiter=}" ;;
    --starttime=*) s="\${a#--starttime=}" ;;
    --endtime=*) e="\${a#--endtime=}" ;;
  esac
done
[ "$e" = now ] && e=$(date +%Y-%m-%dT%H:%M:%S)
span=$(( $(date -d "$e" +%s) - $(date -d "$s" +%s) ))
if [ "$span" -gt 172800 ]; then exec sleep 30; fi
base=$(date -d "$s" +%s)
echo "$(( base % 100000000 ))\${d}COMPLETED\${d}600\${d}alice\${d}hybrid\${d}learn\${d}$(( base % 100000000 ))"
`;

test('days in which every read failed are not counted as read', { timeout: 30_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'estuary-atk-sacct-'));
  onTeardown(() => rmSync(dir, { recursive: true, force: true }));
  const down = join(dir, 'down');
  writeFileSync(join(dir, 'sacct'), sacct(down));
  chmodSync(join(dir, 'sacct'), 0o755);
  const batch = new SlurmBatch({ type: 'slurm', partitions: ['hybrid'], binDir: dir, timeout: 1000, history: 'accounting', historyEvery: EVERY });
  const clock = new VirtualClock();
  const history = new RunHistory(batch, clock, pino({ level: 'silent' }), EVERY);

  // 7 days and 3.5 time out, 1.75 answers.
  await history.refresh();
  for (let n = 0; n < 2; n++) {
    clock.advance(EVERY);
    await history.refresh();
  }
  expect(history.status.error).toBeNull();
  expect(history.status.coveredS).toBe(151_200);
  expect(history.status.narrowedS).not.toBeNull();

  // slurmdbd goes down; five and a half days pass (the wall clock, Slurm's, and the coordinator's).
  writeFileSync(down, '');
  const real = Date.now.bind(Date);
  const shift = 5.5 * DAY;
  vi.spyOn(Date, 'now').mockImplementation(() => real() + shift);
  clock.advance(shift);
  await history.refresh();
  expect(history.status.error).toMatch(/Connection refused/);

  // Only 1.75 days were ever read.
  expect(history.status.coveredS).toBeLessThan(7 * 86_400);
  expect(history.status.narrowedS).not.toBeNull();
});
