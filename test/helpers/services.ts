// Real services the integration tests need. Outside CI a missing service skips the tests that need
// it, with a note; with CI=true it fails the run with the command that starts it, so nothing is
// silently skipped where the machine could have run it.

import { portAnswers } from '../../agent/probe.ts';

export const IN_CI = process.env.CI === 'true' || process.env.CI === '1';

/** Whether something accepts TCP connections at host:port: the agent's own liveness probe. */
export function portOpen(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return portAnswers(host, port, timeoutMs);
}

export interface Availability {
  readonly ok: boolean;
  readonly reason: string;
}

/**
 * Decides whether tests that need a service run. Returns { ok } to feed `describe.runIf`.
 * In CI an unavailable service throws, failing the file with `howToStart` in the message.
 */
export function required(service: string, available: boolean, howToStart: string): Availability {
  if (available) return { ok: true, reason: '' };
  const reason = `${service} is not available; start it with: ${howToStart}`;
  if (IN_CI) throw new Error(`CI=true and ${reason}`);
  console.warn(`skipping tests that need ${service}: ${reason}`);
  return { ok: false, reason };
}
