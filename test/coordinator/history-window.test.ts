// How far back each read of finished jobs reaches (coordinator/history-window.ts): a first read of
// a week that times out is asked again over half the span, down to an hour; once one answers, the
// rest of the week is read in older slices, each twice the last that answered, every other read,
// with the new jobs read in between; a read of the new jobs of an hour or less that times out
// narrows nothing, a longer one (after an outage) is asked again over its most recent half and
// what lies before becomes a gap filled by the older slices; what is covered counts only what
// reads answered for.

import { describe, expect, it } from 'vitest';
import { answered, coveredMs, failed, FIRST_WINDOW, HISTORY_WINDOW_MS, MIN_SPAN_MS, nextRead, OVERLAP_MS, type HistoryWindow } from '../../coordinator/history-window.ts';

const DAY = 86_400_000;
const T0 = 100 * DAY;

describe('the window of the reads of finished jobs', () => {
  it('asks for a week first and from 10 minutes before the last read after it answered', () => {
    const first = nextRead(FIRST_WINDOW, 0, T0);
    expect(first).toEqual({ kind: 'first', since: T0 - HISTORY_WINDOW_MS });
    const w = answered(FIRST_WINDOW, first, 0, T0);
    expect(coveredMs(w)).toBe(HISTORY_WINDOW_MS);
    expect(nextRead(w, 300_000, T0 + 300_000)).toEqual({ kind: 'new', since: T0 - OVERLAP_MS });
  });

  it('halves the first read\'s span at each timeout, down to an hour; other failures ask the same again', () => {
    let w: HistoryWindow = FIRST_WINDOW;
    const spans = [];
    for (let i = 0; i < 10; i++) {
      const r = nextRead(w, 0, T0);
      spans.push((T0 - r.since) / 3_600_000);
      w = failed(w, r, true);
    }
    expect(spans).toEqual([168, 84, 42, 21, 10.5, 5.25, 2.625, 1.3125, 1, 1]);
    expect(w.spanMs).toBe(MIN_SPAN_MS);
    const refused = failed(FIRST_WINDOW, nextRead(FIRST_WINDOW, 0, T0), false);
    expect(nextRead(refused, 0, T0)).toEqual({ kind: 'first', since: T0 - HISTORY_WINDOW_MS });
  });

  it('after a narrowed read answered, reads the older days in slices every other read until the week is covered', () => {
    let w = failed(FIRST_WINDOW, nextRead(FIRST_WINDOW, 0, T0), true); // 7 days timed out
    w = failed(w, nextRead(w, 0, T0), true); // 3.5 days timed out
    const reads: string[] = [];
    let t = 0;
    /** One read at t: its kind and window in days before T0, answered unless `slow` says it times out. */
    const step = (slow: (span: number) => boolean) => {
      const r = nextRead(w, t, T0 + t);
      const span = ((r.until ?? T0 + t) - r.since) / DAY;
      reads.push(`${r.kind} ${((T0 - r.since) / DAY).toFixed(2)}${r.until !== undefined ? `-${((T0 - r.until) / DAY).toFixed(2)}` : ''}${slow(span) ? ' timed out' : ''}`);
      w = slow(span) ? failed(w, r, true) : answered(w, r, t, T0 + t);
      t += 1000;
    };
    // Slurm answers up to 2 days at a time.
    for (let i = 0; i < 10 && coveredMs(w) < HISTORY_WINDOW_MS; i++) step((span) => span > 2);
    expect(reads).toEqual([
      'first 1.75',
      'back 5.25-1.75 timed out',
      'new 0.01',
      'back 3.50-1.75',
      'new 0.01',
      'back 7.00-3.50 timed out',
      'new 0.01',
      'back 5.25-3.50',
      'new 0.01',
      'back 7.00-5.25',
    ]);
    expect(coveredMs(w)).toBe(HISTORY_WINDOW_MS);
    // Covered: only the new jobs from now on.
    expect(nextRead(w, t, T0 + t).kind).toBe('new');
    expect(nextRead(answered(w, nextRead(w, t, T0 + t), t, T0 + t), t + 1, T0 + t + 1).kind).toBe('new');
  });

  it('a read of the new jobs that times out narrows nothing and lets the next slice go back', () => {
    const first = failed(FIRST_WINDOW, nextRead(FIRST_WINDOW, 0, T0), true);
    let w = answered(first, nextRead(first, 0, T0), 0, T0); // 3.5 days answered: span 7 days
    w = failed(w, nextRead(w, 1000, T0 + 1000), false); // the older slice: sacct refused
    const fresh = nextRead(w, 2000, T0 + 2000);
    expect(fresh.kind).toBe('new');
    const after = failed(w, fresh, true);
    expect(after.spanMs).toBe(w.spanMs);
    expect(nextRead(after, 3000, T0 + 3000)).toMatchObject({ kind: 'back', until: T0 - 3.5 * DAY, since: T0 + 3000 - HISTORY_WINDOW_MS });
  });

  it('after an outage, a read of the new jobs that fails for its length reads the most recent part, then fills the gap going back', () => {
    let w = answered(FIRST_WINDOW, nextRead(FIRST_WINDOW, 0, T0), 0, T0); // the week answered
    expect(coveredMs(w)).toBe(HISTORY_WINDOW_MS);
    const t = 3 * DAY; // slurmdbd was down for three days
    const all = nextRead(w, t, T0 + t);
    expect(all).toEqual({ kind: 'new', since: T0 - OVERLAP_MS });
    w = failed(w, all, true, T0 + t);
    expect(coveredMs(w)).toBe(HISTORY_WINDOW_MS); // from the last read that answered: unchanged
    const recent = nextRead(w, t, T0 + t);
    const half = Math.floor((3 * DAY + OVERLAP_MS) / 2);
    expect(recent).toEqual({ kind: 'new', since: T0 + t - half, after: T0 - OVERLAP_MS });
    w = answered(w, recent, t, T0 + t);
    // The recent part is read; between it and the last read before the outage is a gap.
    expect(coveredMs(w)).toBe(HISTORY_WINDOW_MS - (recent.since - (T0 - OVERLAP_MS)));
    const fill = nextRead(w, t + 2, T0 + t + 2);
    expect(fill).toEqual({ kind: 'back', since: T0 - OVERLAP_MS, until: recent.since });
    w = answered(w, fill, t + 2, T0 + t + 2);
    expect(w.gap).toBeUndefined();
    expect(coveredMs(w)).toBe(HISTORY_WINDOW_MS);
    expect(nextRead(w, t + 3, T0 + t + 3)).toEqual({ kind: 'new', since: T0 + t - OVERLAP_MS });
  });

  it('a failed read of the new jobs of an hour or less is asked again as it was', () => {
    const w = answered(FIRST_WINDOW, nextRead(FIRST_WINDOW, 0, T0), 0, T0);
    const r = nextRead(w, 50 * 60_000, T0 + 50 * 60_000);
    const after = failed(w, r, true, T0 + 50 * 60_000);
    expect(after.newSpanMs).toBeUndefined();
    expect(nextRead(after, 51 * 60_000, T0 + 51 * 60_000)).toEqual({ kind: 'new', since: T0 - OVERLAP_MS });
  });

  it('counts as covered only what reads answered for: days in which every read failed are not', () => {
    let w = failed(FIRST_WINDOW, nextRead(FIRST_WINDOW, 0, T0), true);
    w = failed(w, nextRead(w, 0, T0), true);
    w = answered(w, nextRead(w, 0, T0), 0, T0); // 1.75 days
    expect(coveredMs(w)).toBe(1.75 * DAY);
    const later = 5.5 * DAY;
    w = failed(w, nextRead(w, later, T0 + later), false);
    expect(coveredMs(w)).toBe(1.75 * DAY);
  });
});
