// Keeping the run times of finished jobs: the batch system's accounting is read, in the
// background (the loop never waits for it, and a big answer is parsed and added in slices that
// give the event loop back), every `history-every` (the first time over the last
// HISTORY_WINDOW_MS, in the batch system's clock, narrower when that times out or answers more
// than is read: history-window.ts), its jobs go into a RunTimeHistory
// (run-times.ts), and the policy reads the medians from each snapshot. A read that fails keeps
// what was learned and says why — on the status page, in the API and in a metric — and, where
// nothing was learned, decisions fall back to time limits and `runtime` (each decision's reason
// says which estimate it used). Never fails the loop.

import type { BatchSystem } from './batch/types.ts';
import type { Clock } from './clock.ts';
import type { Logger } from '../lib/log.ts';
import { eachSliced } from '../lib/slices.ts';
import { answered, coveredMs, failed, FIRST_WINDOW, HISTORY_WINDOW_MS, nextRead, type HistoryWindow } from './history-window.ts';
import { timedOut, tooLarge } from './proc.ts';
import { RunTimeHistory, type RunTimes } from './run-times.ts';

/** What the status shows of the run-time history. */
export interface HistoryStatus {
  /** Where the finished jobs come from; null until a read succeeded. */
  readonly source: string | null;
  /** Finished jobs learned from. */
  readonly jobs: number;
  /** Records of the last read that could not be read (hostile or broken), skipped. */
  readonly skipped: number;
  /** Why the last read failed (the batch system's words); null when it answered. */
  readonly error: string | null;
  readonly readAt: number | null;
  /**
   * How far back the reads that answered reach from the last that read the new jobs, in seconds,
   * less what is not read in between (a week once whole; 0 before one answered).
   */
  readonly coveredS: number;
  /**
   * After a read timed out or answered more than is read: the span, in seconds, each read reaching
   * back asks for until the week is covered; null while reads are not narrowed.
   */
  readonly narrowedS: number | null;
}

export class RunHistory {
  private readonly batch: BatchSystem;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly everyMs: number;
  private readonly history = new RunTimeHistory();
  private lastTry: number | undefined;
  /** What the reads that answered cover, and how far the next one reaches back. */
  private window: HistoryWindow = FIRST_WINDOW;
  private reading: Promise<void> | undefined;
  private state: HistoryStatus = { source: null, jobs: 0, skipped: 0, error: null, readAt: null, coveredS: 0, narrowedS: null };

  constructor(batch: BatchSystem, clock: Clock, log: Logger, everyMs: number) {
    this.batch = batch;
    this.clock = clock;
    this.log = log;
    this.everyMs = everyMs;
  }

  get status(): HistoryStatus {
    return this.state;
  }

  summary(): RunTimes {
    return this.history.summary();
  }

  /**
   * Starts a read in the background when `history-every` has passed and none is under way; the
   * control loop never waits for it (its answer is used once it came).
   */
  start(): void {
    if (this.reading) return;
    this.reading = this.refresh().finally(() => {
      this.reading = undefined;
    });
  }

  /** The read under way, if any, ended (tests and the simulator). */
  async settle(): Promise<void> {
    await this.reading;
  }

  /** Reads the finished jobs when `history-every` has passed since the last try. */
  async refresh(): Promise<void> {
    const now = this.clock.now();
    if (this.lastTry !== undefined && now - this.lastTry < this.everyMs) return;
    this.lastTry = now;
    if (!this.batch.finished) {
      this.fail(`the ${this.batch.kind} batch system reports no finished jobs`);
      return;
    }
    const accountingAt = this.batch.accountingTime?.() ?? now;
    const ask = nextRead(this.window, now, accountingAt);
    try {
      const read = await this.batch.finished(ask.since, ask.until);
      // In slices: a week of a busy site is hundreds of thousands of jobs, and the loop goes on.
      await eachSliced(read.jobs, (j) => this.history.add([j]));
      // Jobs learned from an earlier read that a record read now disqualifies (followed log).
      if (read.takenBack?.length) this.history.remove(read.takenBack);
      this.window = answered(this.window, ask, now, accountingAt);
      if (read.skipped && read.skipped !== this.state.skipped) this.log.warn({ skipped: read.skipped, source: read.source }, 'finished-job records that could not be read were skipped');
      if (this.state.error || this.state.source === null) this.log.info({ source: read.source, jobs: this.history.size }, 'learning run times from finished jobs');
      this.state = { source: read.source, jobs: this.history.size, skipped: read.skipped, error: null, readAt: now, ...this.reach() };
    } catch (err) {
      const narrow = timedOut(err) || tooLarge(err);
      const before = this.window.spanMs;
      this.window = failed(this.window, ask, narrow, accountingAt);
      if (this.window.spanMs < before)
        this.log.warn({ spanS: this.window.spanMs / 1000 }, `reading finished jobs ${timedOut(err) ? 'timed out' : 'answered more than is read'}: the next reads ask for less`);
      this.fail((err as Error).message, this.reach());
    }
  }

  /** How far back the reads reach, and how far each reaching back asks while narrowed. */
  private reach(): Pick<HistoryStatus, 'coveredS' | 'narrowedS'> {
    const covered = coveredMs(this.window);
    const narrowed = covered < HISTORY_WINDOW_MS && (this.window.spanMs < HISTORY_WINDOW_MS || covered > 0);
    return { coveredS: Math.round(covered / 1000), narrowedS: narrowed ? this.window.spanMs / 1000 : null };
  }

  private fail(error: string, reach?: Pick<HistoryStatus, 'coveredS' | 'narrowedS'>): void {
    const fallback = this.history.size ? 'the run times learned before are kept' : 'decisions use time limits and the configured runtime';
    if (error !== this.state.error) this.log.warn({ err: error }, `cannot read finished jobs: ${fallback}`);
    this.state = { ...this.state, ...reach, error };
  }
}
