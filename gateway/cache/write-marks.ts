// Writes recorded on disk, for the one case where a worker may not have heard of a write before
// the write was answered: it was restarted for not confirming the invalidation in time, or the
// primary relaying it did not answer (gateway/cluster/). Such a worker may have stored, after the
// write, a fill that began before it; the next index scan (its replacement's, or the whole
// gateway's after a restart) must not take that file back.
//
// A mark is one small file, <cache-dir>/v1/written/<sha256 of the key>, holding the key and the
// time of the write. Marks are written only on those timeouts, never for every write, so no
// volume of writes can make the set grow; they are kept for MARK_TTL_MS.

import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Longer than any fill runs: a file stored by a fill begun before the write exists by then. */
export const MARK_TTL_MS = 3_600_000;

function dirOf(root: string): string {
  return join(root, 'written');
}

/** Records that `keys` were written at `at` (ms); durable once the promise resolves. */
export async function recordWrites(root: string, keys: readonly string[], at: number): Promise<void> {
  await mkdir(dirOf(root), { recursive: true });
  for (const key of keys) await recordWrite(root, key, at);
}

async function recordWrite(root: string, key: string, at: number): Promise<void> {
  const dir = dirOf(root);
  const name = createHash('sha256').update(key).digest('hex');
  const temp = join(dir, `.${name}.${process.pid}`);
  await writeFile(temp, JSON.stringify({ key, at }), { flush: true });
  await rename(temp, join(dir, name));
}

/** The marks younger than MARK_TTL_MS, key -> time of the write; older ones are removed. */
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
    // A mark being written (or left half-written by a crash: it never named anything).
    if (name.startsWith('.')) continue;
    const path = join(dir, name);
    const mark = await readFile(path, 'utf8')
      .then((text) => JSON.parse(text) as { key?: unknown; at?: unknown })
      .catch(() => undefined);
    const valid = mark && typeof mark.key === 'string' && typeof mark.at === 'number';
    if (!valid || now - (mark.at as number) > MARK_TTL_MS) {
      await unlink(path).catch(() => undefined);
      continue;
    }
    const key = mark.key as string;
    marks.set(key, Math.max(marks.get(key) ?? 0, mark.at as number));
  }
  return marks;
}
