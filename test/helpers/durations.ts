// How long each test file took in a full run, kept in test/durations.json so that a clean clone
// (which has no vitest cache) still starts the longest files first. With three files at a time,
// a one-minute file started near the end of the run keeps the run going a minute after the
// others are done; started first, it overlaps them.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const DURATIONS_FILE = join(import.meta.dirname, '..', 'durations.json');

/** A file not listed yet (new since the table was made) is assumed to take this long. */
export const UNLISTED_MS = 5000;

/**
 * The file durations in a vitest default-reporter log, one line per file such as
 * ` ✓ test/fuse/mount.test.ts (40 tests | 2 skipped) 30534ms` (also ❯ and × lines, and with the
 * colour codes a terminal log keeps). Durations are rounded to 100 ms.
 */
export function parseDurations(log: string): Record<string, number> {
  const out: Record<string, number> = {};
  const plain = log.replace(/\x1b\[[0-9;]*m/g, '');
  for (const m of plain.matchAll(/^ [✓❯×] (test\/\S+\.test\.ts) \([^)]*\) (\d+(?:\.\d+)?)(ms|s)$/gmu)) {
    const ms = Number(m[2]) * (m[3] === 's' ? 1000 : 1);
    out[m[1]!] = Math.round(ms / 100) * 100;
  }
  return out;
}

/** The table in test/durations.json (empty if it is missing or unreadable). */
export function readDurations(file = DURATIONS_FILE): Record<string, number> {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}
