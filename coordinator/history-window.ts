// How far back each read of finished jobs reaches, in the batch system's clock. The first read
// asks for the last week (HISTORY_WINDOW_MS); later ones start 10 minutes before the last one
// (OVERLAP_MS). On a busy site a week of accounting can be more than sacct answers within
// `batch-system.timeout`, or more than is read of its answer, and asking the same week again
// fails again: so a first read that times out or answers too much is asked again over half the
// span, down to MIN_SPAN_MS. Once one answers, the rest of the week is read in slices going back
// from it, each twice as long as the last that answered (half as long after one that failed so),
// a slice every other read, the new jobs read in between, until the week is covered.
// The read of the new jobs asks for everything since the last one that answered; after an outage
// of slurmdbd that can be more than sacct answers too. One that fails so (longer than an hour) is
// asked again over half its span, until one answers: it reads the most recent part, and what lies
// between it and the last read that answered becomes a gap, filled by the slices going back (the
// most recent first) before those reaching the week's start.
// Pure: the times come in, the next read and the new state go out.

/** How far back the first read looks: a week of finished jobs covers a site's usual work. */
export const HISTORY_WINDOW_MS = 7 * 86_400_000;
/**
 * The shortest span a read is shrunk to: an hour of a site's finished jobs is a few thousand
 * records at most; a read of that which times out says sacct or slurmdbd is in trouble, and
 * narrower reads would not help.
 */
export const MIN_SPAN_MS = 3_600_000;
/** Later reads start this long before the last one: a job's record may be written late. */
export const OVERLAP_MS = 10 * 60_000;

export interface HistoryWindow {
  /** The span of the next read that reaches back: the first, or the next older slice. */
  readonly spanMs: number;
  /** After a read of new jobs failed so: the longest the next one asks for, until one answered. */
  readonly newSpanMs?: number;
  /** What the reads that answered cover: from (batch clock) up to the last read of new jobs, at `accountingAt` (batch clock) and `at` (the coordinator's), except `gap`. */
  readonly covered?: { readonly from: number; readonly accountingAt: number; readonly at: number };
  /** A stretch inside `covered` not read yet (a read of new jobs after an outage read only the most recent part). */
  readonly gap?: { readonly from: number; readonly until: number };
  /** The last read was an older slice: the next one reads the new jobs. */
  readonly wentBack: boolean;
}

export interface WindowRead {
  readonly kind: 'first' | 'back' | 'new';
  readonly since: number;
  /** The end of an older slice; none: up to now. */
  readonly until?: number;
  /** A read of new jobs cut to the span: where it would have started (what lies between is then a gap). */
  readonly after?: number;
}

export const FIRST_WINDOW: HistoryWindow = { spanMs: HISTORY_WINDOW_MS, wentBack: false };

/** The read to make now (`now` in the coordinator's clock, `accountingAt` in the batch system's). */
export function nextRead(w: HistoryWindow, now: number, accountingAt: number): WindowRead {
  const c = w.covered;
  if (!c) return { kind: 'first', since: accountingAt - w.spanMs };
  const weekStart = accountingAt - HISTORY_WINDOW_MS;
  if (!w.wentBack) {
    const gap = w.gap && w.gap.until > weekStart ? { from: Math.max(weekStart, w.gap.from), until: w.gap.until } : undefined;
    if (gap) return { kind: 'back', since: Math.max(gap.from, gap.until - w.spanMs), until: gap.until };
    if (c.from > weekStart) return { kind: 'back', since: Math.max(weekStart, c.from - w.spanMs), until: c.from };
  }
  // When the wall clock was stepped since (NTP, `date -s`), the last read's time in it is either
  // what it said then or now less the time that truly passed, whichever is earlier: a step back
  // never makes the window start in the future, a step forward skips nothing.
  const since = Math.min(c.accountingAt, accountingAt - (now - c.at)) - OVERLAP_MS;
  if (w.newSpanMs === undefined || accountingAt - since <= w.newSpanMs) return { kind: 'new', since };
  return { kind: 'new', since: accountingAt - w.newSpanMs, after: since };
}

/** The window after `read` answered. */
export function answered(w: HistoryWindow, read: WindowRead, now: number, accountingAt: number): HistoryWindow {
  const wider = Math.min(HISTORY_WINDOW_MS, w.spanMs * 2);
  if (read.kind === 'first') return { spanMs: wider, covered: { from: read.since, accountingAt, at: now }, wentBack: false };
  const c = w.covered!;
  const weekStart = accountingAt - HISTORY_WINDOW_MS;
  if (read.kind === 'back') {
    // A slice that reached the week's start leaves nothing older to read: the week back from
    // the last read of new jobs counts as covered.
    const reached = read.since <= weekStart;
    if (w.gap && read.until === w.gap.until) {
      const gap = reached || read.since <= w.gap.from ? undefined : { from: w.gap.from, until: read.since };
      return withGap({ ...w, spanMs: wider, covered: reached ? { ...c, from: Math.min(c.from, c.accountingAt - HISTORY_WINDOW_MS) } : c, wentBack: true }, gap);
    }
    return withGap({ ...w, spanMs: wider, covered: { ...c, from: reached ? Math.min(read.since, c.accountingAt - HISTORY_WINDOW_MS) : read.since }, wentBack: true }, w.gap);
  }
  // New jobs: a read cut to the span leaves a gap between the last read and its start.
  const gap = read.after === undefined ? w.gap : { from: Math.min(read.after, w.gap?.from ?? read.after), until: read.since };
  return withGap({ spanMs: w.spanMs, covered: { from: c.from, accountingAt, at: now }, wentBack: false }, gap && gap.until > weekStart ? gap : undefined);
}

/**
 * The window after `read` failed; `narrow`: the batch system gave no answer in time, or more than
 * is read. A read of new jobs narrows only when it was longer than MIN_SPAN_MS (`accountingAt`
 * tells its length): a shorter one is asked again as it was.
 */
export function failed(w: HistoryWindow, read: WindowRead, narrow: boolean, accountingAt?: number): HistoryWindow {
  const half = (ms: number) => Math.max(MIN_SPAN_MS, Math.floor(ms / 2));
  let spanMs = w.spanMs;
  if (narrow && read.kind !== 'new') spanMs = half(w.spanMs);
  if (narrow && read.kind === 'new' && accountingAt !== undefined && accountingAt - read.since > MIN_SPAN_MS) {
    // The slices going back would ask as much: they start no longer.
    const newSpanMs = half(accountingAt - read.since);
    return { ...w, spanMs: Math.min(w.spanMs, newSpanMs), newSpanMs, wentBack: false };
  }
  return { ...w, spanMs, wentBack: read.kind === 'back' };
}

/**
 * How far back the reads that answered reach from the last read of new jobs that answered (a
 * week once whole, less any gap in it); 0 before one did. Time since the last read that answered
 * is not read, and counts only once a read covers it.
 */
export function coveredMs(w: HistoryWindow): number {
  const c = w.covered;
  if (!c) return 0;
  const start = c.accountingAt - HISTORY_WINDOW_MS;
  const gap = w.gap ? Math.max(0, w.gap.until - Math.max(start, w.gap.from)) : 0;
  return Math.max(0, Math.min(HISTORY_WINDOW_MS, c.accountingAt - c.from) - gap);
}

function withGap(w: HistoryWindow, gap: HistoryWindow['gap']): HistoryWindow {
  const { gap: _old, ...rest } = w;
  return gap ? { ...rest, gap } : rest;
}
