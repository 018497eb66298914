// A read of the completion log takes whole lines only, and leaves what follows the last newline
// for the next read. A region with no newline at the end of the file — a NUL-filled hole (the file
// extended sparsely: `truncate -s`, a writer without O_APPEND after `copytruncate`, the zeros a
// crash leaves in a log's last blocks), or a partial record that never completes — is read again
// by every read until a newline follows it. Each 4 MiB piece is joined to all the bytes before it
// (`Buffer.concat([carry, chunk])` in jobcomp-file.ts), so reading N bytes without a newline
// copies about N²/8 MiB: 200 MiB costs seconds of CPU and over a GB of memory, 400 MiB about
// 20 s of CPU, on every `history-every` until the next record ends the line.
//
// Expected: finding the last newline of 160 MiB costs what reading 160 MiB costs (well under a
// second of CPU), read after read; docs/BENCHMARKING.md ("The completion log, read whole and
// followed") prices a read from the start of a 200 MB log at 3.8 s and a followed read at under a
// millisecond.

import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { CompletionLogFile } from '../../../coordinator/batch/jobcomp-file.ts';
import { MAX_JSON_BYTES } from '../../../coordinator/proc.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';

afterAll(runTeardowns);

const RECORD =
  'JobId=1 UserId=alice(1001) GroupId=alice(1001) Name=learn JobState=COMPLETED Partition=hybrid TimeLimit=60 ' +
  'StartTime=2026-11-20T10:00:00 EndTime=2026-11-20T10:10:00 NodeList=n1 NodeCnt=1 ProcCnt=1 WorkDir=/home/alice ' +
  'ReservationName= Tres=cpu=1 Account= QOS=normal WcKey= Cluster=cluster SubmitTime=2026-11-20T09:59:00 ' +
  'EligibleTime=2026-11-20T09:59:00 DerivedExitCode=0:0 ExitCode=0:0\n';

test('two reads of a log ending in a 160 MiB hole cost well under the CPU of a quadratic copy', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'estuary-atk-colog-'));
  onTeardown(() => rmSync(dir, { recursive: true, force: true }));
  const log = join(dir, 'jobcomp.log');
  writeFileSync(log, RECORD);
  const file = new CompletionLogFile(['hybrid'], MAX_JSON_BYTES);
  expect((await file.read(log)).jobs).toHaveLength(1);
  truncateSync(log, 160 * 1024 * 1024); // sparse: NULs, no newline

  const before = process.cpuUsage();
  for (let i = 0; i < 2; i++) {
    const r = await file.read(log);
    expect(r.jobs).toEqual([]);
    expect(r.start).toBe('continue');
  }
  const used = process.cpuUsage(before);
  const cpuMs = (used.user + used.system) / 1000;
  // Linear: ~0.1–0.4 s for both on this machine; today ~7 s.
  expect(cpuMs).toBeLessThan(3000);
});
