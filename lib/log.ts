// Logging: pino, JSON lines by default and human-readable on a terminal, always on stderr so that
// a command's own output on stdout (a proxy list, a PAC file, a report) stays clean for pipes.
// Each role logs through a child logger carrying { role }.

import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';

export type { Logger } from 'pino';
export type LogFormat = 'json' | 'pretty' | 'auto';
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LogOptions {
  readonly level: LogLevel;
  readonly format: LogFormat;
  readonly role: string;
  /** Where lines go; stderr unless a test passes its own stream. */
  readonly stream?: NodeJS.WritableStream;
}

let rootDestination: ReturnType<typeof pino.destination> | undefined;

export function createLogger(options: LogOptions): Logger {
  const usePretty =
    options.format === 'pretty' || (options.format === 'auto' && process.stderr.isTTY === true);
  let root: Logger;
  if (options.stream) {
    root = pino({ level: options.level }, options.stream);
  } else if (usePretty) {
    root = pino(
      { level: options.level },
      pretty({ destination: 2, sync: true, colorize: process.stderr.isTTY }),
    );
  } else {
    // Asynchronous writes keep logging off a hot path; flushLogs() drains them before exit.
    rootDestination = pino.destination({ dest: 2, sync: false });
    root = pino({ level: options.level }, rootDestination);
  }
  return root.child({ role: options.role });
}

/** Writes out what the asynchronous destination still holds. Call before process exit. */
export function flushLogs(): void {
  try {
    rootDestination?.flushSync();
  } catch {
    // The destination may not be ready yet (nothing written); nothing is lost then.
  }
}
