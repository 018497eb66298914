// Lifecycle of a long-running role: start, run until SIGINT/SIGTERM, then stop accepting work and
// give in-flight work until the deadline to finish. At the deadline the stop signal is aborted so
// the service cuts what is left; either way the process flushes its logs and exits 0. A second
// signal during the drain exits at once with status 130, for an operator who will not wait.

import type { Logger } from './log.ts';

export interface Service {
  /** Stop accepting work, finish or abort in-flight work; `deadline` aborts when time is up. */
  stop(deadline: AbortSignal): Promise<void>;
}

export interface RunOptions {
  readonly log: Logger;
  readonly shutdownTimeoutMs: number;
  /** For tests: a stand-in for process signals. */
  readonly signals?: NodeJS.EventEmitter;
  /**
   * Signals that stop the role (SIGINT and SIGTERM by default). A role whose in-flight work
   * must not be orphaned when its terminal or ssh session closes adds SIGHUP, which otherwise
   * ends the process at once, without its stop.
   */
  readonly stopSignals?: readonly NodeJS.Signals[];
}

export async function runUntilSignalled(service: Service, options: RunOptions): Promise<number> {
  const emitter = options.signals ?? process;
  const { log } = options;
  const names = options.stopSignals ?? ['SIGINT', 'SIGTERM'];
  const received = await new Promise<string>((resolve) => {
    const handlers = names.map((name) => [name, () => onSignal(name)] as const);
    const onSignal = (name: string) => {
      for (const [n, h] of handlers) emitter.off(n, h);
      resolve(name);
    };
    for (const [n, h] of handlers) emitter.on(n, h);
  });
  log.info({ signal: received, deadlineMs: options.shutdownTimeoutMs }, 'stopping');
  const forced = () => {
    log.warn('second signal: exiting without waiting');
    process.exit(130);
  };
  for (const n of names) emitter.once(n, forced);
  const deadline = new AbortController();
  const timer = setTimeout(() => {
    log.warn('shutdown deadline reached: aborting in-flight work');
    deadline.abort(new Error('shutdown deadline reached'));
  }, options.shutdownTimeoutMs);
  try {
    await service.stop(deadline.signal);
  } catch (err) {
    log.error({ err }, 'error while stopping');
  } finally {
    clearTimeout(timer);
    for (const n of names) emitter.off(n, forced);
  }
  log.info('stopped');
  return 0;
}
