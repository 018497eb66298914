// Which request a gateway worker was serving when it crashed. An uncaught exception ends the
// worker (its state may be corrupt) and the primary starts a new one; the crash line names the
// request, so the operator can find the URL that triggers the bug. AsyncLocalStorage follows the
// request through timers, sockets and promises, which a "current request" variable cannot do.

import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage } from 'node:http';

const serving = new AsyncLocalStorage<string>();

/**
 * Test-only: a worker serving a URL that contains this text throws an uncaught exception, so
 * tests can crash a worker on a chosen request (docs/TESTING.md). Unset in production; an empty
 * value is the same as unset.
 */
const CRASH_ON = process.env.ESTUARY_TEST_CRASH_ON || undefined;

/** Runs `handle` with `req` as the request being served (for the crash line). */
export function whileServing(req: IncomingMessage, handle: () => void): void {
  serving.run(`${req.method} ${req.url}`, () => {
    if (CRASH_ON !== undefined && req.url?.includes(CRASH_ON)) {
      // Thrown from a later turn, as a real bug would be: the request is already in flight.
      setImmediate(() => {
        throw new Error(`test crash hook: ESTUARY_TEST_CRASH_ON matched ${req.url}`);
      });
    }
    handle();
  });
}

/** Whether the test crash hook is set for `url`: such a request takes the full path, where the hook is. */
export function crashHookMatches(url: string): boolean {
  return CRASH_ON !== undefined && url.includes(CRASH_ON);
}

/** The request served where the current code runs ("GET http://…"), if any. */
export function servedRequest(): string | undefined {
  return serving.getStore();
}
