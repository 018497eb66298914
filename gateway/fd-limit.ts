// The open-files limit against --max-connections. Past the soft RLIMIT_NOFILE a worker can
// neither accept nor receive a connection, nor open a cache file: clients are reset without a
// word (and Node only warns SentHandleNotReceivedWarning). So the connection cap is lowered to
// what the limit allows, keeping the documented 503 reachable, and the start says why.

import { readFileSync } from 'node:fs';

/** Descriptors kept aside for the process itself: the listener, IPC, logs, SQLite, DNS… */
const RESERVED = 64;
/** A connection on a miss holds its client socket, an upstream socket and a cache file. */
const PER_CONNECTION = 3;

/** The soft "Max open files" of /proc/self/limits; undefined when unknown or unlimited. */
export function parseSoftNofile(limits: string): number | undefined {
  const m = /^Max open files\s+(\S+)/m.exec(limits);
  if (!m || m[1] === 'unlimited') return undefined;
  const n = Number(m[1]);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

export function softNofile(): number | undefined {
  try {
    return parseSoftNofile(readFileSync('/proc/self/limits', 'utf8'));
  } catch {
    return undefined;
  }
}

/** Connections one process can hold within `soft` descriptors; never more than `max`. */
export function connectionCap(max: number, soft: number | undefined): number {
  if (soft === undefined) return max;
  return Math.min(max, Math.max(1, Math.floor((soft - RESERVED) / PER_CONNECTION)));
}
