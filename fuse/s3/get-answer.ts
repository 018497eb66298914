// What the headers of an answer to a GET say its body carries: which bytes of the range asked for,
// how long the body is, and the object's size. Pure: headers in, facts out.
//
// A 206 must start at the byte asked for (Content-Range), and what it carries past the range is
// skipped. A 200 to a ranged GET is the whole object (RFC 9110 §14.2 lets any server ignore
// Range): the range is taken out of it, from byte `start` of its body. But some proxies answer a
// ranged GET with a 200 whose body is the range alone; taken for the whole object, its length
// would shrink the file and its bytes would be read at the wrong offsets. So a 200 is used only
// when its length shows it cannot be the range alone, or matches the size the reader knows:
//
// - the reader knows the object's size (ReadVersion): the 200 must be that long, else it is
//   refused (EIO);
// - it does not: a 200 longer than the range is the whole object, and so is one that starts at
//   byte 0 and is shorter than the range (the object ends inside it: the same bytes either way);
//   one exactly as long as a range from byte 0 carries the right bytes but leaves the size unknown
//   (the caller asks a HEAD); any other is refused.

import { contentLength, header, type Reply } from './http-exchange.ts';
import { type ByteRange, ObjectError } from './object-client.ts';

/** What one answer to a GET carries, from its headers. */
export interface Answer {
  /** Body bytes to skip before the range (a 200 to a ranged GET). */
  skip: number;
  /** Bytes of the range the body carries; Infinity when a body without a length decides. */
  want: number;
  /** The body's length, when the headers tell it. */
  length: number | undefined;
  /** The object's size, when the headers tell it. */
  size: number | undefined;
}

/** `bytes 0-99/5000`: the first and last byte, and the object's size. */
function contentRange(reply: Reply): { first: number; last: number; total: number } | undefined {
  const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(header(reply.headers, 'content-range') ?? '');
  if (!m) return undefined;
  const [first, last, total] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return first <= last && last < total ? { first, last, total } : undefined;
}

/**
 * The object's size that a whole 200 body of `length` bytes, answering `range`, proves (see the
 * top of this file); undefined when it proves none.
 */
export function sizeOf200(range: ByteRange | undefined, length: number): number | undefined {
  if (!range) return length;
  const asked = range.end - range.start;
  return length > asked || (range.start === 0 && length < asked) ? length : undefined;
}

function rangeAlone(key: string, length: number | string, size: number | string): ObjectError {
  return new ObjectError(
    'other',
    `a 200 of ${length} bytes answered a ranged GET of ${key} (${size} bytes): the range alone from a proxy that dropped its 206, or another object`,
    key,
  );
}

/** Reads a success's headers: which bytes of `range` its body carries. */
export function answerOf(key: string, r: Reply, range: ByteRange | undefined): Answer {
  const declared = header(r.headers, 'content-length') === undefined ? undefined : contentLength(r, key);
  if (r.status === 206) {
    const cr = contentRange(r);
    if (!range || !cr)
      throw new ObjectError('other', `answer for ${key} is partial without a valid Content-Range`, key);
    if (cr.first !== range.start)
      throw new ObjectError('other', `answer for ${key} starts at byte ${cr.first}, not at ${range.start} as asked`, key);
    const length = cr.last + 1 - cr.first;
    if (declared !== undefined && declared !== length)
      throw new ObjectError('other', `answer for ${key}: Content-Length ${declared} but Content-Range of ${length}`, key);
    return { skip: 0, want: Math.min(cr.last + 1, range.end) - range.start, length, size: cr.total };
  }
  if (!range) return { skip: 0, want: declared ?? Infinity, length: declared, size: declared };
  const known = range.version?.size;
  let size: number | undefined;
  if (known !== undefined) {
    if (declared !== undefined && declared !== known) throw rangeAlone(key, declared, known);
    // Without a length, the body is read to its end and its length checked then (getOnce).
    size = declared;
  } else if (declared !== undefined) {
    size = sizeOf200(range, declared);
    if (size === undefined && range.start > 0) throw rangeAlone(key, declared, 'size unknown');
  } else if (range.start > 0) {
    throw rangeAlone(key, 'unknown', 'size unknown');
  }
  const end = Math.min(range.end, known ?? declared ?? Infinity);
  return { skip: range.start, want: Math.max(0, end - range.start), length: declared, size };
}
