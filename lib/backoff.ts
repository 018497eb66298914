// Reconnection delays for AMQP clients (agent and discovery): exponential from `baseMs`, capped at
// `maxMs`, with full jitter so a fleet of agents that lost the same broker does not come back in
// one wave. Pure given the random source.

export interface BackoffOptions {
  readonly baseMs: number;
  readonly maxMs: number;
}

/** Delay before attempt number `attempt` (0 for the first retry). */
export function backoffDelay(
  attempt: number,
  options: BackoffOptions,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(options.maxMs, options.baseMs * 2 ** Math.min(attempt, 30));
  // Half fixed, half random: never zero (no hot loop), never above the ceiling.
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** Waits for `work` to settle, or `ms` at most, whichever comes first; never throws. */
export async function within(work: Promise<unknown>, ms: number): Promise<void> {
  const done = new AbortController();
  await Promise.race([work.catch(() => undefined), sleep(ms, done.signal)]);
  done.abort();
}

/** Sleeps `ms`, waking early (without throwing) when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
