// Logging: pino, JSON lines by default and human-readable on a terminal, always on stderr so that
// a command's own output on stdout (a proxy list, a PAC file, a report) stays clean for pipes.
// Each role logs through a child logger carrying { role }. On a terminal every event is one line,
// "[14:03:07] WARN: gateway: upstream failed {"url":…}", in local time: pino-pretty's own layout
// spreads objects and errors over several lines, which scrolls the event that matters away.

import fs from 'node:fs';
import { createRequire } from 'node:module';
import { pino, type Logger } from 'pino';
import type PinoPretty from 'pino-pretty';
import { terminalSafe } from './terminal-text.ts';

/**
 * pino-pretty and its dependencies hold about 2.7 MB once loaded: only a terminal needs them, so
 * daemons logging JSON (a mount on a worker node) never load them.
 */
const require = createRequire(import.meta.url);
const loadPretty = (): typeof PinoPretty => require('pino-pretty') as typeof PinoPretty;

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

/** What follows the time and level on a terminal: role, message, then the other fields as JSON; no control characters. */
export function prettyMessage(log: Record<string, unknown>, messageKey: string): string {
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(log)) if (!SHOWN.has(k) && k !== messageKey) rest[k] = flat(v);
  const fields = Object.keys(rest).length > 0 ? ` ${JSON.stringify(rest)}` : '';
  // The message may quote what a user wrote (a job's comment); JSON.stringify already escapes
  // the fields' control characters.
  return terminalSafe(`${log.role ? `${String(log.role)}: ` : ''}${String(log[messageKey] ?? '')}${fields}`);
}

export function createLogger(options: LogOptions): Logger {
  const usePretty =
    options.format === 'pretty' || (options.format === 'auto' && process.stderr.isTTY === true);
  let root: Logger;
  if (options.stream) {
    root = pino({ level: options.level }, options.stream);
  } else if (usePretty) {
    const pretty = loadPretty();
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
    rootDestination.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
    });
    root = pino({ level: options.level }, rootDestination);
  }
  return root.child({ role: options.role });
}

/** The longest flushLogs() waits for a log reader that does not read. */
export const FLUSH_DEADLINE_MS = 1000;

/**
 * Writes out what the asynchronous destination still holds. Call before process exit.
 *
 * Bounded whatever the log's reader does: sonic-boom's flushSync retries a failed write for ever
 * (EPIPE once the reader of a `2>&1 | head` pipe has gone; EAGAIN while a live reader does not
 * read), sleeping in a futex wait that no signal ends. For the length of the flush its writes go
 * through a guard that, on EPIPE or past FLUSH_DEADLINE_MS, reports the line written: lines
 * nobody can read are dropped, and the process ends within its shutdown deadline.
 */
export function flushLogs(): void {
  if (!rootDestination) return;
  const write = fs.writeSync;
  const until = performance.now() + FLUSH_DEADLINE_MS;
  let gaveUp = false;
  const guarded = (fd: number, data: string | NodeJS.ArrayBufferView, ...rest: unknown[]): number => {
    const size = typeof data === 'string' ? Buffer.byteLength(data, (rest[0] as BufferEncoding | undefined) ?? 'utf8') : data.byteLength;
    if (gaveUp) return size;
    try {
      return (write as (...a: unknown[]) => number)(fd, data, ...rest);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EPIPE' || performance.now() >= until) {
        gaveUp = true;
        return size;
      }
      throw err;
    }
  };
  fs.writeSync = guarded as typeof fs.writeSync;
  try {
    rootDestination.flushSync();
  } catch {
    // The destination may not be ready yet (nothing written); nothing is lost then.
  } finally {
    fs.writeSync = write;
  }
}

/**
 * A log reader that went away must not end or hang the process: EPIPE on stdout or stderr is
 * ignored (the lines are lost; nobody could read them), anything else is still thrown.
 */
export function ignoreBrokenPipes(): void {
  for (const stream of [process.stdout, process.stderr]) {
    if (stream.listenerCount('error') > 0) continue;
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
    });
  }
}
