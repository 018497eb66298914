// Lifecycle of a long-running role: start, run until SIGINT/SIGTERM, then stop accepting work and
// give in-flight work until the deadline to finish. At the deadline the stop signal is aborted so
// the service cuts what is left; either way the process flushes its logs and exits 0. A second
// signal during the drain exits at once with status 130, for an operator who will not wait.

import type { Logger } from './log.ts';

export interface Service {
  /**
   * Stop accepting work, finish or abort in-flight work; `deadline` aborts when time is up. A
   * number is the exit status (a stop that could not finish its work says so); none means 0.
   */
  stop(deadline: AbortSignal): Promise<void | number>;
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
  /**
   * Something other than a signal that stops the role as the first signal would (a mount
   * unmounted from outside), resolving with what it was. A signal after it is then the first:
   * the operator who sends one stop signal (as systemd does) is not taken to have sent two.
   */
  readonly stopWhen?: Promise<string>;
  /** What the log says at the deadline (a role that never cuts work short says what it does instead). */
  readonly deadlineSays?: string;
}

export async function runUntilSignalled(service: Service, options: RunOptions): Promise<number> {
  const emitter = options.signals ?? process;
  const { log } = options;
  const names = options.stopSignals ?? ['SIGINT', 'SIGTERM'];
  // One handler per signal, from start to the end of the stop: between removing one and adding
  // another, the signal's default action would end the process (a SIGTERM sent as soon as
  // "stopping" shows, after a stop that began without a signal, did).
  let signals = 0;
  let stopping = false;
  let begin: (why: string) => void = () => undefined;
  const begun = new Promise<string>((resolve) => (begin = resolve));
  /** Begins the stop once, whatever asked first; false when it had begun already. */
  const start = (why: string): boolean => {
    if (stopping) return false;
    stopping = true;
    begin(why);
    return true;
  };
  const onSignal = (name: string) => {
    signals++;
    if (signals > 1) {
      log.warn('second signal: exiting without waiting');
      process.exit(130);
      return;
    }
    if (!start(name)) log.info('already stopping; a second signal exits without waiting');
  };
  const handlers = names.map((name) => [name, () => onSignal(name)] as const);
  for (const [n, h] of handlers) emitter.on(n, h);
  options.stopWhen?.then(start, () => undefined);
  const received = await begun;
  log.info({ signal: received, deadlineMs: options.shutdownTimeoutMs }, 'stopping');
  const deadline = new AbortController();
  const timer = setTimeout(() => {
    log.warn(options.deadlineSays ?? 'shutdown deadline reached: aborting in-flight work');
    deadline.abort(new Error('shutdown deadline reached'));
  }, options.shutdownTimeoutMs);
  let status = 0;
  try {
    status = (await service.stop(deadline.signal)) ?? 0;
  } catch (err) {
    log.error({ err }, 'error while stopping');
  } finally {
    clearTimeout(timer);
    for (const [n, h] of handlers) emitter.off(n, h);
  }
  log.info({ status }, 'stopped');
  return status;
}
