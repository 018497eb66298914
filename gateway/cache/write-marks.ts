// Writes recorded on disk, for the one case where a worker may not have heard of a write before
// the write was answered: it was restarted for not confirming the invalidation in time, or the
// primary relaying it did not answer (gateway/cluster/). Such a worker may have stored, after the
// write, a fill that began before it; the next index scan (its replacement's, or the whole
// gateway's after a restart) must not take that file back.
//
// A record is one file per write, <cache-dir>/v1/written/<time>-<pid>-<random>, holding the time
// of the write and every key it dropped ({"at": ms, "keys": [...]}), written to a temporary name,
// flushed to disk once and renamed: a purge of 100,000 keys costs one fsync, not 100,000. Records
// are written only on those timeouts, never for every write, so no volume of writes can make the
// set grow; they are kept for MARK_TTL_MS. A record of the earlier form (one file per key,
// {"key", "at"}) is still read.

import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Longer than any fill runs: a file stored by a fill begun before the write exists by then. */
export const MARK_TTL_MS = 3_600_000;

function dirOf(root: string): string {
  return join(root, 'written');
}

/** Records that `keys` were written at `at` (ms); durable once the promise resolves. */
export async function recordWrites(root: string, keys: readonly string[], at: number): Promise<void> {
  if (keys.length === 0) return;
  const dir = dirOf(root);
  await mkdir(dir, { recursive: true });
  const name = `${at}-${process.pid}-${randomBytes(6).toString('hex')}`;
  const temp = join(dir, `.${name}`);
  await writeFile(temp, JSON.stringify({ at, keys }), { flush: true });
  await rename(temp, join(dir, name));
}

/** The keys a record names and when they were written; undefined for a file that is no record. */
function parseRecord(text: string): { keys: readonly string[]; at: number } | undefined {
  let r: { key?: unknown; keys?: unknown; at?: unknown };
  try {
    r = JSON.parse(text) as typeof r;
  } catch {
    return undefined;
  }
  if (typeof r !== 'object' || r === null || typeof r.at !== 'number') return undefined;
  if (typeof r.key === 'string') return { keys: [r.key], at: r.at };
  if (!Array.isArray(r.keys) || !r.keys.every((k) => typeof k === 'string')) return undefined;
  return { keys: r.keys as string[], at: r.at };
}

/** The recorded writes younger than MARK_TTL_MS, key -> time of its latest write; older records are removed. */
export async function readWrites(root: string, now: number): Promise<Map<string, number>> {
  const marks = new Map<string, number>();
  const dir = dirOf(root);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return marks;
  }
  for (const name of names) {
    // A record being written (or left half-written by a crash: it never named anything).
    if (name.startsWith('.')) continue;
    const path = join(dir, name);
    const record = await readFile(path, 'utf8')
      .then(parseRecord)
      .catch(() => undefined);
    if (!record || now - record.at > MARK_TTL_MS) {
      await unlink(path).catch(() => undefined);
      continue;
    }
    for (const key of record.keys) marks.set(key, Math.max(marks.get(key) ?? 0, record.at));
  }
  return marks;
}
