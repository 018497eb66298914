// Logging: pino, JSON lines by default and human-readable on a terminal, always on stderr so that
// a command's own output on stdout (a proxy list, a PAC file, a report) stays clean for pipes.
// Each role logs through a child logger carrying { role }. On a terminal every event is one line,
// "[14:03:07] WARN: gateway: upstream failed {"url":…}", in local time: pino-pretty's own layout
// spreads objects and errors over several lines, which scrolls the event that matters away.

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

/** Fields every line has, or that the line already shows in front. */
const SHOWN = new Set(['level', 'time', 'pid', 'hostname', 'role', 'msg']);

/** An error (pino's serialised form) as "Error: message"; its stack stays in the JSON format. */
function flat(v: unknown): unknown {
  if (v && typeof v === 'object' && 'message' in v && 'stack' in v) {
    return `${(v as { type?: string }).type ?? 'Error'}: ${String((v as { message: unknown }).message)}`;
  }
  return v;
}

/** What follows the time and level on a terminal: role, message, then the other fields as JSON. */
export function prettyMessage(log: Record<string, unknown>, messageKey: string): string {
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(log)) if (!SHOWN.has(k) && k !== messageKey) rest[k] = flat(v);
  const fields = Object.keys(rest).length > 0 ? ` ${JSON.stringify(rest)}` : '';
  return `${log.role ? `${String(log.role)}: ` : ''}${String(log[messageKey] ?? '')}${fields}`;
}

export function createLogger(options: LogOptions): Logger {
  const usePretty =
    options.format === 'pretty' || (options.format === 'auto' && process.stderr.isTTY === true);
  let root: Logger;
  if (options.stream) {
    root = pino({ level: options.level }, options.stream);
  } else if (usePretty) {
    root = pino(
      { level: options.level },
      pretty({
        destination: 2,
        sync: true,
        colorize: process.stderr.isTTY,
        translateTime: 'SYS:HH:MM:ss',
        ignore: 'pid,hostname',
        hideObject: true,
        messageFormat: (log, key) => prettyMessage(log, key),
      }),
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
