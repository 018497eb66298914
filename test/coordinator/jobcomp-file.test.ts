// The job completion log followed from where the last read stopped (coordinator/batch/
// jobcomp-follow.ts, jobcomp-file.ts): each read takes only what was written since, a record
// without its newline yet is read next time, a rotated log (logrotate `create` or `copytruncate`)
// is read from its start, and the jobs learned and records skipped over a run of reads are those
// of a read of the whole file, duplicate job ids and users with two uids included.

import { appendFileSync, readFileSync, renameSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CompletionLogFile } from '../../coordinator/batch/jobcomp-file.ts';
import { placeAfter, startOf, TAIL_BYTES, wholeLines } from '../../coordinator/batch/jobcomp-follow.ts';
import { parseJobComp } from '../../coordinator/batch/jobcomp-parse.ts';
import { RunTimeHistory, type FinishedJob } from '../../coordinator/run-times.ts';
import { runTeardowns } from '../helpers/cleanup.ts';
import { tempDir } from '../helpers/tmp.ts';

afterAll(runTeardowns);

/** One record as jobcomp_filetxt.c writes it, with its newline. */
function record(id: number, user: string, name: string, o: { uid?: number; state?: string; seconds?: number; workDir?: string } = {}): string {
  const s = o.seconds ?? 30;
  const end = `2026-11-24T10:${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
  const uid = o.uid ?? 1001;
  return `JobId=${id} UserId=${user}(${uid}) GroupId=${user}(${uid}) Name=${name} JobState=${o.state ?? 'COMPLETED'} Partition=hybrid TimeLimit=60 StartTime=2026-11-24T10:00:00 EndTime=${end} NodeList=n1 NodeCnt=1 ProcCnt=1 WorkDir=${o.workDir ?? '/home/u'} ReservationName= Tres=cpu=1,mem=100M,node=1,billing=1 Account= QOS=normal WcKey= Cluster=c SubmitTime=2026-11-24T09:59:00 EligibleTime=2026-11-24T09:59:00 DerivedExitCode=0:0 ExitCode=0:0 \n`;
}

const ids = (jobs: readonly FinishedJob[]) => jobs.map((j) => j.id);

async function logFile(): Promise<{ path: string; log: CompletionLogFile }> {
  const dir = await tempDir('estuary-jobcomp-');
  const path = join(dir, 'jobcomp.txt');
  writeFileSync(path, '');
  return { path, log: new CompletionLogFile(['hybrid'], 1024 ** 3) };
}

describe('where the next read of the completion log starts (pure)', () => {
  const st = { dev: 1, ino: 7, size: 500 };
  const place = placeAfter('/l', st, 8000, Buffer.alloc(8000, 'x'));
  it('continues at the last read\'s end in the same file, checking the bytes before it', () => {
    expect(place.tail).toHaveLength(TAIL_BYTES);
    expect(startOf(place, '/l', { ...st, size: 9000 })).toEqual({ from: 8000, why: 'continue', expect: place.tail, scanned: 8000 });
    expect(startOf(place, '/l', { ...st, size: 8000 })).toMatchObject({ from: 8000, why: 'continue' });
  });
  it('searches on for a newline from where the last search got, unless the file is shorter now', () => {
    const searched = placeAfter('/l', st, 8000, Buffer.alloc(8000, 'x'), 8500);
    expect(startOf(searched, '/l', { ...st, size: 9000 })).toMatchObject({ from: 8000, why: 'continue', scanned: 8500 });
    expect(startOf(searched, '/l', { ...st, size: 8200 })).toMatchObject({ from: 8000, why: 'continue', scanned: 8000 });
  });
  it('reads from the start: first read, another path, another inode or device, a file shorter than the offset', () => {
    expect(startOf(undefined, '/l', st)).toEqual({ from: 0, why: 'first' });
    expect(startOf(place, '/other', st)).toEqual({ from: 0, why: 'moved' });
    expect(startOf(place, '/l', { ...st, ino: 8 })).toEqual({ from: 0, why: 'new file' });
    expect(startOf(place, '/l', { ...st, dev: 2 })).toEqual({ from: 0, why: 'new file' });
    expect(startOf(place, '/l', { ...st, size: 7999 })).toEqual({ from: 0, why: 'truncated' });
  });
  it('takes whole lines only', () => {
    expect(wholeLines(Buffer.from('a\nb\nc'))).toBe(4);
    expect(wholeLines(Buffer.from('abc'))).toBe(0);
    expect(wholeLines(Buffer.from('a\n'))).toBe(2);
  });
});

describe('the completion log read from where the last read stopped', () => {
  it('reads only what was written since, and a record without its newline yet next time, once', async () => {
    const { path, log } = await logFile();
    appendFileSync(path, record(1, 'alice', 'a') + record(2, 'alice', 'a'));
    const first = await log.read(path);
    expect([ids(first.jobs), first.start]).toEqual([['1', '2'], 'first']);
    const nothing = await log.read(path);
    expect([ids(nothing.jobs), nothing.start, nothing.bytes]).toEqual([[], 'continue', 0]);
    // slurmctld is writing record 3: half of it is there.
    const r3 = record(3, 'alice', 'a');
    appendFileSync(path, r3.slice(0, 100));
    const half = await log.read(path);
    expect([ids(half.jobs), half.skipped, half.bytes]).toEqual([[], 0, 0]);
    appendFileSync(path, r3.slice(100) + record(4, 'alice', 'a'));
    const rest = await log.read(path);
    expect([ids(rest.jobs), rest.start, rest.bytes]).toEqual([['3', '4'], 'continue', r3.length + record(4, 'alice', 'a').length]);
  });

  it('a second record of a job id read before skips both, counted as a read of the whole file counts them', async () => {
    const { path, log } = await logFile();
    appendFileSync(path, record(500, 'alice', 'a') + record(501, 'bob', 'b', { uid: 1003 }));
    expect(ids((await log.read(path)).jobs)).toEqual(['500', '501']);
    // A forged (or foreign) second record of 500, and one of a user name with a second uid.
    appendFileSync(path, record(500, 'mallory', 'a', { uid: 1002 }) + record(502, 'bob', 'b', { uid: 1004 }) + record(503, 'carol', 'c', { uid: 1005 }));
    const second = await log.read(path);
    expect(ids(second.jobs)).toEqual(['503']);
    const whole = parseJobComp(readAll(path), ['hybrid']);
    expect(second.skipped).toBe(whole.skipped);
    expect(second.skipped).toBe(4); // both 500s, and bob's 501 and 502
    appendFileSync(path, record(500, 'alice', 'a'));
    const third = await log.read(path);
    expect([ids(third.jobs), third.skipped]).toEqual([[], parseJobComp(readAll(path), ['hybrid']).skipped]);
  });

  it('a record cut by a newline in its name skips every line after it, in later reads too', async () => {
    const { path, log } = await logFile();
    appendFileSync(path, record(1, 'alice', 'a') + record(2, 'mallory', 'x\nJobId=3 UserId=alice(1001)'));
    const first = await log.read(path);
    expect(ids(first.jobs)).toEqual(['1']);
    appendFileSync(path, record(4, 'alice', 'a'));
    const second = await log.read(path);
    expect(ids(second.jobs)).toEqual([]);
    expect(second.skipped).toBe(parseJobComp(readAll(path), ['hybrid']).skipped);
  });

  it('a log rotated with `create` (a new inode) is read from its start; the old file\'s unread rest is not', async () => {
    const { path, log } = await logFile();
    appendFileSync(path, record(1, 'alice', 'a'));
    await log.read(path);
    appendFileSync(path, record(2, 'alice', 'a')); // written after the last read, before the rotation
    renameSync(path, `${path}.1`);
    writeFileSync(path, record(3, 'alice', 'a'));
    const r = await log.read(path);
    expect([ids(r.jobs), r.start]).toEqual([['3'], 'new file']);
  });

  it('a log rotated with `copytruncate` is read from its start, also once it has grown past the old offset', async () => {
    const { path, log } = await logFile();
    appendFileSync(path, record(1, 'alice', 'a'));
    await log.read(path);
    truncateSync(path, 0);
    appendFileSync(path, record(2, 'alice', 'a'));
    const r = await log.read(path);
    expect([ids(r.jobs), r.start]).toEqual([['2'], 'truncated']);
    // Truncated again, and by the next read slurmctld wrote more than was there: the size cannot
    // tell, the bytes before the offset do.
    const ino = statSync(path).ino;
    truncateSync(path, 0);
    appendFileSync(path, record(10, 'alice', 'a', { seconds: 40 }) + record(11, 'alice', 'a'));
    expect(statSync(path).ino).toBe(ino);
    const again = await log.read(path);
    expect([ids(again.jobs), again.start]).toEqual([['10', '11'], 'truncated']);
  });

  it('what is learned over many reads equals one read of the whole file', async () => {
    const { path, log } = await logFile();
    const lines = Array.from({ length: 300 }, (_, i) =>
      i % 37 === 5 ? record(i % 50, 'dup', 'd', { uid: 1007 }) : i % 53 === 7 ? 'garbage line\n' : record(1000 + i, ['alice', 'bob', 'carol'][i % 3]!, `n${i % 4}`, { uid: 1001 + (i % 3), seconds: i % 59 }),
    );
    const text = lines.join('');
    const followed = new RunTimeHistory();
    let at = 0;
    let skipped = 0;
    // Written in uneven pieces, cut mid-record, read after each.
    for (const size of [1, 700, 3, 5000, 17, 20_000, 999_999]) {
      appendFileSync(path, text.slice(at, at + size));
      at += size;
      const r = await log.read(path);
      followed.add(r.jobs);
      followed.remove(r.takenBack);
      skipped = r.skipped;
    }
    const whole = parseJobComp(text, ['hybrid']);
    const once = new RunTimeHistory();
    once.add(whole.jobs);
    expect(followed.size).toBe(once.size);
    expect(followed.summary()).toEqual(once.summary());
    expect(skipped).toBe(whole.skipped);
  });

  it('a job learned in an earlier read is taken back when a later read brings a second record of its id or a second uid of its user', async () => {
    const text = [
      record(1, 'alice', 'a', { seconds: 10 }),
      record(2, 'alice', 'a', { seconds: 3000 }),
      record(3, 'bob', 'b', { uid: 1002 }),
      record(2, 'alice', 'a', { seconds: 20 }),
      record(4, 'bob', 'b', { uid: 1009 }),
      record(5, 'carol', 'c', { uid: 1003 }),
    ].join('');
    const whole = parseJobComp(text, ['hybrid']);
    const once = new RunTimeHistory();
    once.add(whole.jobs);
    // Every split of the log in two reads, then in three at every 61st pair of bytes.
    const splits: number[][] = [];
    for (let i = 1; i < text.length; i++) splits.push([i]);
    for (let i = 1; i < text.length; i += 61) for (let j = i + 1; j < text.length; j += 61) splits.push([i, j]);
    const { path } = await logFile();
    const differ: number[][] = [];
    for (const cuts of splits) {
      writeFileSync(path, '');
      const log = new CompletionLogFile(['hybrid'], 1024 ** 3);
      const followed = new RunTimeHistory();
      let at = 0;
      let skipped = 0;
      for (const end of [...cuts, text.length]) {
        appendFileSync(path, text.slice(at, end));
        at = end;
        const r = await log.read(path);
        followed.add(r.jobs);
        followed.remove(r.takenBack);
        skipped = r.skipped;
      }
      if (followed.size !== once.size || skipped !== whole.skipped || JSON.stringify([...followed.summary()]) !== JSON.stringify([...once.summary()])) differ.push(cuts);
    }
    expect(differ).toEqual([]);
    expect([...once.summary().keys()]).toEqual(['alice\nhybrid\na', 'alice\nhybrid', 'carol\nhybrid\nc', 'carol\nhybrid']);
  });

  it('a read that fails forgets where it was: the next one reads the file from its start', async () => {
    const { path, log } = await logFile();
    appendFileSync(path, record(1, 'alice', 'a'));
    await log.read(path);
    renameSync(path, `${path}.gone`);
    await expect(log.read(path)).rejects.toMatchObject({ code: 'ENOENT' });
    renameSync(`${path}.gone`, path);
    const r = await log.read(path);
    expect([ids(r.jobs), r.start]).toEqual([['1'], 'first']);
  });
});

function readAll(path: string): string {
  return readFileSync(path, 'utf8');
}
