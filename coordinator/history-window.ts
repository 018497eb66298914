// How far back each read of finished jobs reaches, in the batch system's clock. The first read
// asks for the last week (HISTORY_WINDOW_MS); later ones start 10 minutes before the last one
// (OVERLAP_MS). On a busy site a week of accounting can be more than sacct answers within
// `batch-system.timeout`, and asking the same week again times out again: so a first read that
// times out is asked again over half the span, down to MIN_SPAN_MS. Once one answers, the rest of
// the week is read in slices going back from it, each twice as long as the last that answered
// (half as long after one that timed out), a slice every other read, the new jobs read in between,
// until the week is covered. Pure: the times come in, the next read and the new state go out.

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
  /** What the reads that answered cover: from (batch clock) up to the last read, at `accountingAt` (batch clock) and `at` (the coordinator's). */
  readonly covered?: { readonly from: number; readonly accountingAt: number; readonly at: number };
  /** The last read was an older slice: the next one reads the new jobs. */
  readonly wentBack: boolean;
}

export interface WindowRead {
  readonly kind: 'first' | 'back' | 'new';
  readonly since: number;
  /** The end of an older slice; none: up to now. */
  readonly until?: number;
}

export const FIRST_WINDOW: HistoryWindow = { spanMs: HISTORY_WINDOW_MS, wentBack: false };

/** The read to make now (`now` in the coordinator's clock, `accountingAt` in the batch system's). */
export function nextRead(w: HistoryWindow, now: number, accountingAt: number): WindowRead {
  const c = w.covered;
  if (!c) return { kind: 'first', since: accountingAt - w.spanMs };
  const weekStart = accountingAt - HISTORY_WINDOW_MS;
  if (c.from > weekStart && !w.wentBack) return { kind: 'back', since: Math.max(weekStart, c.from - w.spanMs), until: c.from };
  // When the wall clock was stepped since (NTP, `date -s`), the last read's time in it is either
  // what it said then or now less the time that truly passed, whichever is earlier: a step back
  // never makes the window start in the future, a step forward skips nothing.
  return { kind: 'new', since: Math.min(c.accountingAt, accountingAt - (now - c.at)) - OVERLAP_MS };
}

/** The window after `read` answered. */
export function answered(w: HistoryWindow, read: WindowRead, now: number, accountingAt: number): HistoryWindow {
  const wider = Math.min(HISTORY_WINDOW_MS, w.spanMs * 2);
  if (read.kind === 'first') return { spanMs: wider, covered: { from: read.since, accountingAt, at: now }, wentBack: false };
  if (read.kind === 'back') return { spanMs: wider, covered: { ...w.covered!, from: read.since }, wentBack: true };
  return { ...w, covered: { from: w.covered!.from, accountingAt, at: now }, wentBack: false };
}

/** The window after `read` failed; `timedOut`: the batch system gave no answer in time. */
export function failed(w: HistoryWindow, read: WindowRead, timedOut: boolean): HistoryWindow {
  const narrower = timedOut && read.kind !== 'new' ? Math.max(MIN_SPAN_MS, Math.floor(w.spanMs / 2)) : w.spanMs;
  return { ...w, spanMs: narrower, wentBack: read.kind === 'back' };
}

/** How far back the reads that answered reach, from `accountingAt`; 0 before one did. */
export function coveredMs(w: HistoryWindow, accountingAt: number): number {
  return w.covered ? Math.min(HISTORY_WINDOW_MS, accountingAt - w.covered.from) : 0;
}
