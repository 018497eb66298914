// The job completion log read as a file (coordinator/batch/jobcomp-parse.ts), and the slurm.conf
// settings that say where it is (slurm-conf.ts), on hand-made input in slurmctld 22.05's format.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseJobComp, parseJobCompSliced } from '../../coordinator/batch/jobcomp-parse.ts';
import { readSlurmConf } from '../../coordinator/batch/slurm-conf.ts';

/** One record as jobcomp_filetxt.c writes it. */
function record(id: number, user: string, name: string, o: { state?: string; seconds?: number; workDir?: string; partition?: string } = {}): string {
  const end = `2026-11-24T10:0${Math.floor((o.seconds ?? 30) / 60)}:${String((o.seconds ?? 30) % 60).padStart(2, '0')}`;
  return `JobId=${id} UserId=${user}(1001) GroupId=${user}(1001) Name=${name} JobState=${o.state ?? 'COMPLETED'} Partition=${o.partition ?? 'hybrid'} TimeLimit=60 StartTime=2026-11-24T10:00:00 EndTime=${end} NodeList=n1 NodeCnt=1 ProcCnt=1 WorkDir=${o.workDir ?? '/home/u'} ReservationName= Tres=cpu=1,mem=100M,node=1,billing=1 Account= QOS=normal WcKey= Cluster=c SubmitTime=2026-11-24T09:59:00 EligibleTime=2026-11-24T09:59:00 DerivedExitCode=0:0 ExitCode=0:0 `;
}

describe('the job completion log', () => {
  it('reads user, partition, name and run time (EndTime less StartTime); names with spaces and other = words are the name\'s', () => {
    const text = [record(1, 'alice', 'train', { seconds: 90 }), record(2, 'bob', 'my job a=b', { seconds: 5 }), record(3, 'bob', 'x', { state: 'FAILED' }), record(4, 'bob', 'y', { partition: 'other' })].join('\n') + '\n';
    expect(parseJobComp(text, ['hybrid'])).toEqual({
      jobs: [
        { id: '1', user: 'alice', partition: 'hybrid', name: 'train', elapsedMs: 90_000 },
        { id: '2', user: 'bob', partition: 'hybrid', name: 'my job a=b', elapsedMs: 5_000 },
      ],
      skipped: 0,
    });
  });

  it('a record holding one of slurmctld\'s keys twice (in its name or working directory) is skipped and counted, never attributed', () => {
    const text = [
      record(10, 'mallory', 'x UserId=alice(1001) Name=train', { seconds: 1 }),
      record(11, 'mallory', 'x JobId=99', { seconds: 1 }),
      record(12, 'mallory', 'ok', { workDir: '/tmp/a JobState=COMPLETED' }),
      record(13, 'alice', 'train'),
    ].join('\n');
    const r = parseJobComp(text, ['hybrid']);
    expect(r.jobs.map((j) => [j.id, j.user, j.name])).toEqual([['13', 'alice', 'train']]);
    expect(r.skipped).toBe(3);
  });

  it('two records glued on one line (slurmctld cuts a record at 1023 bytes without its newline) are skipped', () => {
    const glued = record(20, 'bob', 'a').slice(0, 300) + record(21, 'alice', 'b');
    expect(parseJobComp(glued, ['hybrid'])).toEqual({ jobs: [], skipped: 1 });
  });

  it('a record cut by a newline in its name: every line after it is skipped and counted', () => {
    const forged = record(99, 'alice', 'train', { seconds: 1 }).trim();
    const cut = record(30, 'mallory', `x\n${forged}\ny`);
    const text = [record(1, 'bob', 'before'), cut, record(31, 'bob', 'after')].join('\n');
    const r = parseJobComp(text, ['hybrid']);
    expect(r.jobs.map((j) => j.id)).toEqual(['1']);
    expect(r).toMatchObject({ skipped: 4, cut: true });
  });

  it('lines not in slurmctld\'s shape (no JobId first, an unreadable time, a user outside Slurm\'s names) are skipped and counted', () => {
    const text = ['garbage', record(40, 'alice', 'a').replace('EndTime=2026-11-24T10:00:30', 'EndTime=Unknown'), record(41, 'al ice', 'a')].join('\n');
    expect(parseJobComp(text, ['hybrid'])).toEqual({ jobs: [], skipped: 3 });
  });

  it('a time Date would roll over (month 13, day 32, hour 24) makes the record unreadable, not another date', () => {
    const good = record(20, 'alice', 'train');
    const text = [
      good.replace('EndTime=2026-11-24T10:00:30', 'EndTime=2026-13-24T10:00:30'),
      good.replace('StartTime=2026-11-24T10:00:00', 'StartTime=2026-11-32T10:00:00'),
      good.replace('EndTime=2026-11-24T10:00:30', 'EndTime=2026-11-24T24:00:30'),
      good,
    ].join('\n');
    const r = parseJobComp(text, ['hybrid']);
    expect(r.jobs.map((j) => j.elapsedMs)).toEqual([30_000]);
  });

  it('reads the same in slices', async () => {
    const text = Array.from({ length: 5000 }, (_, i) => record(i + 1, `u${i % 7}`, i % 3 ? 'a' : 'b Name=c')).join('\n');
    expect(await parseJobCompSliced(text, ['hybrid'])).toEqual(parseJobComp(text, ['hybrid']));
  });
});

describe('slurm.conf: where the completion log is', () => {
  it('reads keys in any case, the last one winning, through Include files, comments left out', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'estuary-slurmconf-'));
    writeFileSync(join(dir, 'jobcomp.conf'), 'JobCompLoc=/var/log/slurm/jobcomp.txt # the log\n');
    writeFileSync(join(dir, 'slurm.conf'), '# JobCompType=jobcomp/none\nClusterName=c\njobcomptype=jobcomp/filetxt\nJobCompLoc=/old\nInclude jobcomp.conf\n');
    const conf = await readSlurmConf(join(dir, 'slurm.conf'));
    expect(conf.get('jobcomptype')).toBe('jobcomp/filetxt');
    expect(conf.get('jobcomploc')).toBe('/var/log/slurm/jobcomp.txt');
  });

  it('reads only regular files of at most 1 MiB, each once: a huge Include adds nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'estuary-slurmconf-'));
    writeFileSync(join(dir, 'huge.conf'), `JobCompLoc=/from/huge\n${'#'.repeat(2 * 1024 * 1024)}\n`);
    writeFileSync(join(dir, 'slurm.conf'), 'JobCompType=jobcomp/filetxt\nJobCompLoc=/var/log/jc.txt\nInclude huge.conf\nInclude /dev/zero\nInclude slurm.conf\n');
    const conf = await readSlurmConf(join(dir, 'slurm.conf'));
    expect(conf.get('jobcomploc')).toBe('/var/log/jc.txt');
  });
});
