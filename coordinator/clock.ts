// Time, taken as a parameter. Policy and drone logic read `clock.now()` and never Date.now() or a
// timer, so the same code runs in production, in unit tests and in a simulator on virtual time.
import { sleep } from '../lib/backoff.ts';

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Resolves after `ms` of this clock's time, or at once when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * The wall clock when the process started, moved on by the monotonic clock since. Every duration
 * the coordinator judges (boot timeout, idle time, minimum lifetime, back-offs) is a difference
 * of now() values, so a step of the wall clock (NTP's makestep after a VM resumes, `date -s`) must
 * not move now(): an hour of wall clock that did not pass is not an hour of boot. Times persisted
 * and shown are epoch milliseconds as before; after a step they differ from the wall clock by the
 * step until the next start, which reads the wall clock afresh. Durations spanning a restart are
 * the only ones measured on the wall clock.
 */
export function monotonicClock(): Clock {
  const wallAtStart = Date.now();
  const monoAtStart = performance.now();
  return {
    now: () => Math.round(wallAtStart + (performance.now() - monoAtStart)),
    sleep: (ms, signal) => sleep(ms, signal),
  };
}

export const systemClock: Clock = monotonicClock();

/** A clock that moves only when told to: for tests and simulation. */
export class VirtualClock implements Clock {
  private t: number;
  private sleepers: { until: number; resolve: () => void }[] = [];

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      this.sleepers.push({ until: this.t + ms, resolve });
      signal?.addEventListener('abort', () => resolve(), { once: true });
    });
  }

  /** Moves time forward and wakes every sleeper whose time has come. */
  advance(ms: number): void {
    this.t += ms;
    const due = this.sleepers.filter((s) => s.until <= this.t);
    this.sleepers = this.sleepers.filter((s) => s.until > this.t);
    for (const s of due) s.resolve();
  }
}
