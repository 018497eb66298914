// Where the next read of the job completion log starts. The log only grows between rotations, so
// a read continues from the end of the last complete record the previous read saw, when the file
// at the path is still the one read then:
// - the same file: same device and inode, at least as long as the offset, and the bytes just
//   before the offset are still those read there (logrotate's `copytruncate` empties the file in
//   place, and slurmctld may have written past the old offset by the next read: only the bytes
//   tell);
// - otherwise (a new inode: logrotate's `create`, or a JobCompLoc that changed) the file is new,
//   and it is read from its start.
// A read takes whole lines only: a record slurmctld has not finished writing (no newline yet) is
// left for the next read, which starts at its first byte. How far the search for its newline got
// is kept too, so that bytes with no newline (a partial record, a NUL-filled hole) are searched
// once, not on every read: the next read searches on from there, unless the file is now shorter.
// Pure.

/**
 * Bytes before the offset kept to recognise the file: slurmctld writes a record of at most 1,024
 * bytes, so these hold the last one whole, its job id included (records' ends alone are alike:
 * the same times and exit codes).
 */
export const TAIL_BYTES = 4096;

/** Where the last read stopped, and what the file looked like there. */
export interface LogPlace {
  readonly path: string;
  readonly dev: number;
  readonly ino: number;
  /** The end of the last complete record read (just after its newline). */
  readonly offset: number;
  /** The TAIL_BYTES (or fewer, at the file's start) before `offset`. */
  readonly tail: Buffer;
  /** How far the bytes after `offset` were searched for a newline (none found). */
  readonly scanned: number;
}

export type Start =
  | { readonly from: 0; readonly why: 'first' | 'moved' | 'new file' | 'truncated' }
  | { readonly from: number; readonly why: 'continue'; readonly expect: Buffer; readonly scanned: number };

/** Where to start reading `path`, found as `st` now, after the read that left `place`. */
export function startOf(place: LogPlace | undefined, path: string, st: { readonly dev: number; readonly ino: number; readonly size: number }): Start {
  if (!place) return { from: 0, why: 'first' };
  if (place.path !== path) return { from: 0, why: 'moved' };
  if (place.dev !== st.dev || place.ino !== st.ino) return { from: 0, why: 'new file' };
  if (st.size < place.offset) return { from: 0, why: 'truncated' };
  return { from: place.offset, why: 'continue', expect: place.tail, scanned: st.size >= place.scanned ? place.scanned : place.offset };
}

/** The length of `buf` up to and including its last newline: the complete lines in it. */
export function wholeLines(buf: Buffer): number {
  return buf.lastIndexOf(0x0a) + 1;
}

/**
 * The place after a read of `path` that ended at `offset`, `before` being the bytes read up to
 * there, and the bytes after it searched up to `scanned`.
 */
export function placeAfter(path: string, st: { readonly dev: number; readonly ino: number }, offset: number, before: Buffer, scanned = offset): LogPlace {
  return { path, dev: st.dev, ino: st.ino, offset, tail: Buffer.from(before.subarray(Math.max(0, before.length - TAIL_BYTES))), scanned };
}
