// When the primary stops restarting gateway workers. A worker that dies is replaced at once: the
// bug that killed it usually sits on one request, and the site's other clients need the service.
// A worker that keeps dying right after its replacement meets something every worker meets (a
// broken disk, a request every client retries, a bug at start-up); restarting it for ever would
// hide that behind a service that answers nothing reliably, so the primary gives up and says why.

/**
 * Five deaths within a minute end the service: a start takes about a second, so five in a minute
 * is a loop rather than bad luck, while a bug hit by one request now and then (deaths minutes apart)
 * never trips it, however long the service runs.
 */
export const CRASH_LOOP = { restarts: 5, windowMs: 60_000 } as const;

export class CrashLoop {
  readonly #limit: number;
  readonly #windowMs: number;
  #deaths: number[] = [];

  constructor(limit: number = CRASH_LOOP.restarts, windowMs: number = CRASH_LOOP.windowMs) {
    this.#limit = limit;
    this.#windowMs = windowMs;
  }

  /** Notes a worker's death at `now` (ms); true when that makes a loop the primary must give up on. */
  died(now: number): boolean {
    this.#deaths = this.#deaths.filter((t) => now - t < this.#windowMs);
    this.#deaths.push(now);
    return this.#deaths.length >= this.#limit;
  }

  /** Deaths within the window before `now`: the status page warns before the limit is reached. */
  recent(now: number): number {
    return this.#deaths.filter((t) => now - t < this.#windowMs).length;
  }
}
