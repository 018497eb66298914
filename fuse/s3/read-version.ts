// Which version of an object a reader reads, checked against every answer of its GETs, so that a
// file replaced in the bucket while open is never read as a mix of two versions.
//
// The ETag names a version where the store sends one (If-Match, and the answer's ETag compared,
// for servers that ignore the header). Some S3-compatible stores and proxies send none: then
// Last-Modified does (If-Unmodified-Since, and the answer's compared), to the second, as HTTP
// dates go. The object's size is checked on every answer that tells it (a 206's Content-Range
// total, a 200's length): an answer of another size is another object, or a proxy that lies.
// What the reader did not know when it began (a store without ETags: the Last-Modified) is taken
// from the first answer, and every later one must agree with it.

import { ObjectError } from './object-client.ts';

/** What an answer says of the object it comes from; undefined where it says nothing. */
export interface AnswerFacts {
  readonly etag?: string;
  /** Milliseconds since the epoch, from Last-Modified. */
  readonly lastModified?: number;
  readonly size?: number;
}

export class ReadVersion {
  /** The ETag, without quotes; undefined when the store sends none. */
  etag: string | undefined;
  lastModified: number | undefined;
  size: number | undefined;

  constructor(known: { etag?: string; lastModified?: Date; size?: number } = {}) {
    this.etag = known.etag || undefined;
    const ms = known.lastModified?.getTime();
    // A Last-Modified of 0 is what a head without one is given (data-path.ts headOf).
    this.lastModified = ms ? ms : undefined;
    this.size = known.size;
  }

  /**
   * The conditional header that asks the store for this version only. A weak ETag (`W/…`, from a
   * proxy that marks what it passes on) never matches If-Match (RFC 9110 13.1.1): the answers'
   * ETags are compared instead, and Last-Modified asked for where known.
   */
  conditions(): Record<string, string> {
    if (this.etag !== undefined && !isWeak(this.etag)) return { 'if-match': `"${this.etag}"` };
    if (this.lastModified !== undefined) return { 'if-unmodified-since': new Date(this.lastModified).toUTCString() };
    return {};
  }

  /** Throws `changed` when `answer` comes from another version; learns what was not known. */
  check(key: string, answer: AnswerFacts): void {
    const changed = (what: string) => {
      throw new ObjectError('changed', `${key} was replaced while open: ${what}`, key);
    };
    if (this.etag !== undefined && answer.etag !== undefined) {
      if (answer.etag !== this.etag) changed(`ETag ${answer.etag}, not ${this.etag}`);
    } else if (this.lastModified !== undefined && answer.lastModified !== undefined) {
      if (answer.lastModified !== this.lastModified)
        changed(`Last-Modified ${new Date(answer.lastModified).toUTCString()}, not ${new Date(this.lastModified).toUTCString()}`);
    }
    if (this.size !== undefined && answer.size !== undefined && answer.size !== this.size)
      changed(`${answer.size} bytes, not ${this.size}`);
    this.etag ??= answer.etag || undefined;
    this.lastModified ??= answer.lastModified;
    this.size ??= answer.size;
  }
}

/** An ETag a proxy marked weak (`W/…`, quotes stripped): no use in If-Match. */
export const isWeak = (etag: string): boolean => etag.startsWith('W/');
