// Attack: slurm.conf Include lines (coordinator/batch/slurm-conf.ts, readSlurmConf).
// 1. A file that includes itself several times: the depth cap (8) bounds depth, not breadth, so
//    ten self-includes make 10^8 reads — the coordinator stalls. Expected: each file is read once
//    (a loop is a one-line refusal or ignored), and the read finishes at once.
// 2. An Include of a FIFO with no writer: readFile blocks in open() forever and the coordinator
//    hangs. Expected (brief/docs: "the coordinator never hangs or stalls"): only regular files are
//    read; anything else is a one-line error saying what to fix.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSlurmConf } from '../../../coordinator/batch/slurm-conf.ts';

const within = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p.then(() => 'done', () => 'done'), new Promise((r) => setTimeout(() => r('stalled'), ms).unref())]);

describe('slurm.conf Include', () => {
  it('a file including itself ten times is read promptly', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'atk-inc-'));
    const conf = join(dir, 'slurm.conf');
    writeFileSync(conf, 'JobCompType=jobcomp/filetxt\n' + 'Include slurm.conf\n'.repeat(10));
    expect(await within(readSlurmConf(conf), 3000)).toBe('done');
  }, 10_000);

  it('an Include of a FIFO does not hang', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'atk-fifo-'));
    execFileSync('mkfifo', [join(dir, 'pipe')]);
    const conf = join(dir, 'slurm.conf');
    writeFileSync(conf, 'JobCompType=jobcomp/filetxt\nInclude pipe\n');
    expect(await within(readSlurmConf(conf), 3000)).toBe('done');
  }, 10_000);
});
