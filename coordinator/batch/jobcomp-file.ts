// The job completion log followed as a file: each read takes the whole lines written since the
// last one (jobcomp-follow.ts says where it starts) and feeds them to one JobCompRecords, which
// keeps across reads what a later record can change (a cut record, the job ids seen, each user's
// uids). So the jobs learned and the records skipped are those of a read of the whole file, at
// the cost of what was written since. A read that fails midway forgets everything: the next one
// reads the file from its start, as the first read after a start does.

import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { eachSliced, linesOf } from '../../lib/slices.ts';
import type { FinishedJob } from '../run-times.ts';
import { placeAfter, startOf, TAIL_BYTES, wholeLines, type LogPlace, type Start } from './jobcomp-follow.ts';
import { JobCompRecords } from './jobcomp-parse.ts';

/** Bytes read at a time: thousands of records, and a first read of hundreds of MiB never holds them all as one text. */
const CHUNK_BYTES = 4 * 1024 * 1024;

/** The file is larger than a read takes. */
export class LogTooLarge extends Error {
  readonly size: number;
  constructor(size: number) {
    super(`${size} bytes`);
    this.size = size;
  }
}

/** The path is not a regular file (a directory, a FIFO, a device). */
export class LogNotAFile extends Error {}

export interface LogRead {
  readonly jobs: FinishedJob[];
  /** Jobs given by an earlier read that a record read now disqualifies: to be taken back out. */
  readonly takenBack: { id: string; user: string }[];
  /** Records skipped in the whole file so far (as one read of all of it counts them). */
  readonly skipped: number;
  /** Where this read started: the last one's end (`continue`), or the file's start and why. */
  readonly start: Start['why'];
  /** Bytes read. */
  readonly bytes: number;
}

export class CompletionLogFile {
  private readonly partitions: readonly string[];
  private readonly maxBytes: number;
  private place: LogPlace | undefined;
  private records: JobCompRecords;

  constructor(partitions: readonly string[], maxBytes: number) {
    this.partitions = partitions;
    this.maxBytes = maxBytes;
    this.records = new JobCompRecords(partitions);
  }

  /** The finished jobs written to `path` since the last read (all of them on a first read or a new file). */
  async read(path: string): Promise<LogRead> {
    try {
      return await this.follow(path);
    } catch (err) {
      this.place = undefined;
      this.records = new JobCompRecords(this.partitions);
      throw err;
    }
  }

  private async follow(path: string): Promise<LogRead> {
    // Non-blocking: a FIFO at the path (no writer) would otherwise hold the read for ever.
    const fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const st = await fh.stat();
      if (!st.isFile()) throw new LogNotAFile(`${path} is not a regular file`);
      if (st.size > this.maxBytes) throw new LogTooLarge(st.size);
      let start = startOf(this.place, path, st);
      if (start.why === 'continue' && !(await bytesAre(fh, start.from - start.expect.length, start.expect))) start = { from: 0, why: 'truncated' };
      if (start.from === 0) this.records = new JobCompRecords(this.partitions);
      const before = start.why === 'continue' ? start.expect : Buffer.alloc(0);
      const end = await this.feed(fh, start.from, start.why === 'continue' ? start.scanned : start.from, st.size, before);
      this.place = placeAfter(path, st, end.offset, end.before, end.scanned);
      return { jobs: this.records.take(), takenBack: this.records.takeBack(), skipped: this.records.skipped, start: start.why, bytes: end.offset - start.from };
    } finally {
      await fh.close();
    }
  }

  /**
   * Feeds the whole lines from `from` up to `size`, searching for newlines from `scanFrom` (the
   * bytes between held none when last searched); returns where the lines end, the bytes before
   * that, and how far the search got. Each byte is searched once: a piece with no newline is not
   * joined to the next, and the bytes of an unfinished line are read again only once its newline
   * came, to be fed.
   */
  private async feed(fh: FileHandle, from: number, scanFrom: number, size: number, before: Buffer): Promise<{ offset: number; before: Buffer; scanned: number }> {
    let offset = from;
    let pos = Math.max(from, scanFrom);
    while (pos < size) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, size - pos));
      const { bytesRead } = await fh.read(chunk, 0, chunk.length, pos);
      if (bytesRead === 0) break; // cut shorter while being read: the rest is read next time
      const whole = wholeLines(chunk.subarray(0, bytesRead));
      if (whole > 0) {
        const head = offset < pos ? await readRange(fh, offset, pos - offset) : Buffer.alloc(0);
        if (head.length < pos - offset) return { offset, before, scanned: offset }; // cut shorter meanwhile
        const buf = head.length ? Buffer.concat([head, chunk.subarray(0, whole)]) : chunk.subarray(0, whole);
        await eachSliced(linesOf(buf.toString('utf8')), (line) => this.records.read(line));
        offset += buf.length;
        before = Buffer.concat([before, buf.subarray(Math.max(0, buf.length - TAIL_BYTES))]);
        before = before.subarray(Math.max(0, before.length - TAIL_BYTES));
      }
      pos += bytesRead;
    }
    return { offset, before, scanned: pos };
  }
}

/** `length` bytes at `at` (fewer when the file is shorter now). */
async function readRange(fh: FileHandle, at: number, length: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(length);
  const { bytesRead } = await fh.read(buf, 0, length, at);
  return buf.subarray(0, bytesRead);
}

/** Whether the file holds `expect` at `at`. */
async function bytesAre(fh: FileHandle, at: number, expect: Buffer): Promise<boolean> {
  const found = Buffer.alloc(expect.length);
  const { bytesRead } = await fh.read(found, 0, found.length, at);
  return bytesRead === expect.length && found.equals(expect);
}
