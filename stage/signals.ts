// Ctrl-C and SIGTERM during a copy. The first signal aborts `stop` (no new file or part starts;
// large downloads checkpoint at once, parts and small files in flight finish) and, after the
// shutdown deadline, `cut` (whatever is still in flight is cut; the journal keeps what finished).
// A second signal exits at once: the journal is rewritten atomically after every part, so even
// then the next run resumes. The command ends with 130 (SIGINT) or 143 (SIGTERM), as a shell
// reports a program killed by that signal: a script must not take an interrupted copy for a
// finished one.

/**
 * A signal delivered twice within this window is one keypress: `npx estuary` forwards the
 * terminal's SIGINT to a child that also got it from the terminal itself.
 */
const DUPLICATE_MS = 500;

export interface Signals {
  readonly stop: AbortSignal;
  readonly cut: AbortSignal;
  /** The first signal received, if any. */
  readonly received: 'SIGINT' | 'SIGTERM' | undefined;
  dispose(): void;
}

export function watchSignals(shutdownMs: number, onSecond: (name: string) => void, emitter: NodeJS.EventEmitter = process): Signals {
  const stop = new AbortController();
  const cut = new AbortController();
  let received: 'SIGINT' | 'SIGTERM' | undefined;
  let at = 0;
  let timer: NodeJS.Timeout | undefined;
  const on = (name: 'SIGINT' | 'SIGTERM') => () => {
    const now = performance.now();
    if (received === undefined) {
      received = name;
      at = now;
      stop.abort();
      timer = setTimeout(() => cut.abort(), shutdownMs);
      return;
    }
    if (now - at < DUPLICATE_MS) return;
    cut.abort();
    onSecond(name);
    process.exit(received === 'SIGINT' ? 130 : 143);
  };
  const onInt = on('SIGINT');
  const onTerm = on('SIGTERM');
  emitter.on('SIGINT', onInt);
  emitter.on('SIGTERM', onTerm);
  return {
    stop: stop.signal,
    cut: cut.signal,
    get received() {
      return received;
    },
    dispose() {
      clearTimeout(timer);
      emitter.off('SIGINT', onInt);
      emitter.off('SIGTERM', onTerm);
    },
  };
}
