// Attack: a big history. docs/COORDINATOR.md, "Run times": "The output is read up to 256 MiB,
// like squeue's." runProgram (coordinator/proc.ts) kills any program whose output passes 64 MiB
// ("runaway"), also when the caller raised maxOutputBytes to 256 MiB: the else-branch checks
// the runaway cap regardless. And the random delimiter sacct is asked for (26 characters,
// printed 6 times a record) makes each record ~190 bytes, so a week of ~350 000 finished jobs
// (a busy site's array tasks) already passes 64 MiB: the first read (the last 7 days) fails,
// and as nothing was read it asks for the same 7 days again every history-every, forever.
//
// Expected: a sacct answer of 70 MiB (well under the promised 256 MiB) is read and learned from.
//
// The same cap cuts squeue: docs/COORDINATOR.md, "Slurm": "squeue's and sinfo's JSON is read
// whole up to 256 MiB (a million jobs is far less)". Slurm 22.05's `squeue --json` prints about
// 3.1 KB per job (measured here: 20 held jobs, 3101 bytes each), and it lists every job of every
// partition (-p is ignored with --json), so a cluster with ~21 600 jobs in its queue passes 64 MiB:
// every squeue read fails, the batch system reads as unreachable, and no drone is ever started or
// stopped. Expected: a queue of 25 000 jobs (~75 MiB) is read.

import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SlurmBatch } from '../../../coordinator/batch/slurm.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';

afterAll(runTeardowns);

/** A sacct that prints `records` well-formed finished jobs in the delimiter it is asked for. */
function fakeSacct(dir: string, records: number): void {
  const script = `#!/bin/sh
d=''
for a in "$@"; do case "$a" in --delimiter=*) d="\${a#--delimiter=}";; esac; done
exec awk -v d="$d" -v n=${records} 'BEGIN { for (i = 1; i <= n; i++) printf "%d%sCOMPLETED%s%d%salice%shybrid%strain%s%d\\n", i, d, d, 60 + i % 7, d, d, d, d, i }'
`;
  writeFileSync(join(dir, 'sacct'), script);
  chmodSync(join(dir, 'sacct'), 0o755);
}

describe('Slurm answers of tens of MiB', () => {
  it('a 70 MiB answer (under the documented 256 MiB) is read, not refused as "output too large"', async () => {
    const dir = await tempDir('estuary-atk-sacct2-');
    // ~190 bytes a record with the coordinator's own delimiter: 390 000 records ≈ 70 MiB.
    fakeSacct(dir, 390_000);
    const batch = new SlurmBatch({ type: 'slurm', partitions: ['hybrid'], binDir: dir, timeout: 50_000, history: 'accounting', historyEvery: 300_000 });
    const read = await batch.finished(Date.now() - 7 * 86_400_000);
    expect(read.skipped).toBe(0);
    expect(read.jobs.length).toBe(390_000);
  }, 60_000);

  it('squeue --json of 25 000 jobs at 22.05\'s ~3 KB a job (~75 MiB) is read, not refused as "output too large"', async () => {
    const dir = await tempDir('estuary-atk-sacct2-');
    // Pending jobs with the fields the coordinator reads, padded to 22.05's size with `command`.
    writeFileSync(
      join(dir, 'squeue'),
      `#!/bin/sh
exec awk 'BEGIN { pad = sprintf("%3000s", ""); gsub(/ /, "x", pad); printf "{\\"jobs\\":["; for (i = 1; i <= 25000; i++) printf "%s{\\"job_id\\":%d,\\"job_state\\":\\"PENDING\\",\\"state_reason\\":\\"Resources\\",\\"partition\\":\\"hybrid\\",\\"cpus\\":1,\\"memory_per_node\\":100,\\"features\\":\\"\\",\\"comment\\":\\"\\",\\"time_limit\\":10,\\"submit_time\\":1,\\"user_name\\":\\"alice\\",\\"name\\":\\"train\\",\\"command\\":\\"/home/alice/%s\\"}", (i > 1 ? "," : ""), i, pad; printf "],\\"errors\\":[]}" }'
`,
    );
    chmodSync(join(dir, 'squeue'), 0o755);
    const batch = new SlurmBatch({ type: 'slurm', partitions: ['hybrid'], binDir: dir, timeout: 50_000, history: 'off', historyEvery: 300_000 });
    const queue = await batch.queue('atk-');
    expect(queue.pending.length).toBe(25_000);
  }, 60_000);
});
