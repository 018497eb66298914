// Keeping the run times of finished jobs: the batch system's accounting is read, in the
// background (the loop never waits for it, and a big answer is parsed and added in slices that
// give the event loop back), every `history-every` (the first time over the last
// HISTORY_WINDOW_MS, in the batch system's clock), its jobs go into a RunTimeHistory
// (run-times.ts), and the policy reads the medians from each snapshot. A read that fails keeps
// what was learned and says why — on the status page, in the API and in a metric — and, where
// nothing was learned, decisions fall back to time limits and `runtime` (each decision's reason
// says which estimate it used). Never fails the loop.

import type { BatchSystem } from './batch/types.ts';
import type { Clock } from './clock.ts';
import type { Logger } from '../lib/log.ts';
import { eachSliced } from '../lib/slices.ts';
import { RunTimeHistory, type RunTimes } from './run-times.ts';

/** How far back the first read looks: a week of finished jobs covers a site's usual work. */
export const HISTORY_WINDOW_MS = 7 * 86_400_000;
/** Later reads start this long before the last one: a job's record may be written late. */
const OVERLAP_MS = 10 * 60_000;

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
}

export class RunHistory {
  private readonly batch: BatchSystem;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly everyMs: number;
  private readonly history = new RunTimeHistory();
  private lastTry: number | undefined;
  /** The last read that answered: when, in the coordinator's clock and in the batch system's. */
  private lastOk: { readonly at: number; readonly accountingAt: number } | undefined;
  private reading: Promise<void> | undefined;
  private state: HistoryStatus = { source: null, jobs: 0, skipped: 0, error: null, readAt: null };

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
    try {
      const read = await this.batch.finished(this.since(now, accountingAt));
      // In slices: a week of a busy site is hundreds of thousands of jobs, and the loop goes on.
      await eachSliced(read.jobs, (j) => this.history.add([j]));
      this.lastOk = { at: now, accountingAt };
      if (read.skipped && read.skipped !== this.state.skipped) this.log.warn({ skipped: read.skipped, source: read.source }, 'finished-job records that could not be read were skipped');
      if (this.state.error || this.state.source === null) this.log.info({ source: read.source, jobs: this.history.size }, 'learning run times from finished jobs');
      this.state = { source: read.source, jobs: this.history.size, skipped: read.skipped, error: null, readAt: now };
    } catch (err) {
      this.fail((err as Error).message);
    }
  }

  /**
   * Where the read starts, in the batch system's clock: 10 minutes before the last read as that
   * clock counted it. When the wall clock was stepped since (NTP, `date -s`), the last read's
   * time in it is either what it said then or now less the time that truly passed, whichever is
   * earlier: a step back never makes the window start in the future, a step forward skips nothing.
   */
  private since(now: number, accountingAt: number): number {
    if (this.lastOk === undefined) return accountingAt - HISTORY_WINDOW_MS;
    return Math.min(this.lastOk.accountingAt, accountingAt - (now - this.lastOk.at)) - OVERLAP_MS;
  }

  private fail(error: string): void {
    const fallback = this.history.size ? 'the run times learned before are kept' : 'decisions use time limits and the configured runtime';
    if (error !== this.state.error) this.log.warn({ err: error }, `cannot read finished jobs: ${fallback}`);
    this.state = { ...this.state, error };
  }
}
