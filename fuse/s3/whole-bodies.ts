// Whole-object answers to ranged GETs, shared by the GETs of one object that follow.
//
// A server may ignore Range (RFC 9110 §14.2) and answer each ranged GET with the whole object from
// its first byte. Readahead asks for a file in consecutive ranges, so each would move the object
// from its start again: one read of a 16 MiB file moved it eight times. Instead, once a GET has its
// range out of such a body, the body is paused (the connection waits, unread, see http1-pool.ts)
// and the next GET of the same object that starts at or after where it stopped goes on reading it,
// skipping to its own range: a sequential read moves the object about once. A GET that starts
// before where the body stopped opens its own. GETs that arrive while such a body is being read
// toward their start wait for it rather than start another from byte 0. A body nobody takes within
// PARK_MS is closed.

import type { Reply } from './http-exchange.ts';
import type { Parked } from './http1-pool.ts';
import type { AnswerFacts } from './read-version.ts';

/**
 * How long a paused body waits for the next GET: readahead asks for the next range as its reader
 * moves on, within milliseconds on a fast link; a reader that stopped should not hold a connection.
 */
const PARK_MS = 2000;

export interface WholeBody {
  readonly parked: Parked;
  readonly reply: Reply;
  readonly facts: AnswerFacts;
  /** The body's length: the object's size. */
  readonly length: number;
  /** The object offset of the first byte not yet handed to anyone (`carry` starts there). */
  readonly next: number;
  /** Bytes already received from `next` on. */
  readonly carry: Buffer;
}

type Entry =
  | { readonly state: 'streaming'; readonly upto: number; readonly waiters: (() => void)[] }
  | { readonly state: 'parked'; readonly body: WholeBody; readonly timer: NodeJS.Timeout };

export class WholeBodies {
  private readonly byKey = new Map<string, Entry>();

  /**
   * A GET of `key` reads a whole body up to object offset `upto`: GETs from there on wait for it.
   * False when another body of `key` is already shared (this one is not).
   */
  streaming(key: string, upto: number): boolean {
    if (this.byKey.has(key)) return false;
    this.byKey.set(key, { state: 'streaming', upto, waiters: [] });
    return true;
  }

  /** The body read by streaming() paused at `body.next`: the next GET from there on takes it. */
  park(key: string, body: WholeBody): void {
    const was = this.byKey.get(key);
    const timer = setTimeout(() => {
      if (this.byKey.get(key)?.state !== 'parked') return;
      this.byKey.delete(key);
      body.parked.close();
    }, PARK_MS);
    timer.unref();
    this.byKey.set(key, { state: 'parked', body, timer });
    if (was?.state === 'streaming') for (const w of was.waiters) w();
  }

  /** The body read by streaming() ended or failed: GETs that waited for it send their own. */
  done(key: string): void {
    const was = this.byKey.get(key);
    if (was?.state !== 'streaming') return;
    this.byKey.delete(key);
    for (const w of was.waiters) w();
  }

  /**
   * The paused body of `key` that can serve a GET of [start, end) (waiting for one being read
   * toward it), now the caller's to read up to `end` and then park() or done(); undefined when
   * there is none.
   */
  async take(key: string, start: number, end: number): Promise<WholeBody | undefined> {
    for (;;) {
      const e = this.byKey.get(key);
      if (!e) return undefined;
      if (e.state === 'streaming') {
        if (e.upto > start) return undefined;
        await new Promise<void>((resolve) => e.waiters.push(resolve));
        continue;
      }
      if (e.body.next > start) return undefined;
      clearTimeout(e.timer);
      this.byKey.set(key, { state: 'streaming', upto: end, waiters: [] });
      return e.body;
    }
  }

  close(): void {
    for (const e of this.byKey.values()) {
      if (e.state === 'parked') {
        clearTimeout(e.timer);
        e.body.parked.close();
      } else {
        for (const w of e.waiters) w();
      }
    }
    this.byKey.clear();
  }
}
