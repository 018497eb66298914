// A fill's writes to the disk tier: body chunks and the final commit, with what a full file
// system costs (our oldest entries once, then the disk is marked full for a while).

import type { Cache } from '../cache/cache.ts';
import { type DiskEntry, EVICT_ON_FULL, isDiskFull, type TempFile } from '../cache/disk-store.ts';
import type { EntryMeta } from '../cache/entry.ts';
import type { Fill } from '../cache/fill.ts';
import type { Logger } from '../../lib/log.ts';
import { UpstreamFailure } from '../upstream.ts';

interface WriteDeps {
  readonly cache: Cache;
  readonly log: Logger;
}

/**
 * Commits a verified body. When the disk fills up at the trailer, the body is whole in the
 * temporary file: its readers get all of it, unstored, and later requests pass through while the
 * disk is marked full. Resolves undefined in that case, the fill already finished.
 */
export async function commitOrKeep(deps: WriteDeps, fill: Fill, temp: TempFile, final: EntryMeta): Promise<DiskEntry | undefined> {
  try {
    return await deps.cache.disk.commit(temp, final);
  } catch (err) {
    if (!isDiskFull(err)) throw err;
    deps.cache.disk.markFull();
    deps.log.warn({ url: final.url }, 'cache disk full at the trailer; delivering the body unstored');
    fill.stored = false;
    fill.path = temp.path;
    fill.meta = final;
    fill.finish('done');
    deps.cache.endFill(fill);
    await deps.cache.disk.abort(temp);
    return undefined;
  }
}

/** Writes a whole chunk at `at`. A full disk first costs our own oldest entries, then the fill. */
export async function writeAt(deps: WriteDeps, temp: TempFile, chunk: Buffer, at: number): Promise<void> {
  let off = 0;
  let evicted = false;
  while (off < chunk.length) {
    try {
      const { bytesWritten } = await temp.fh.write(chunk, off, chunk.length - off, at + off);
      off += bytesWritten;
    } catch (err) {
      if (!isDiskFull(err)) throw err;
      if (!evicted && (await deps.cache.disk.evictBytes(EVICT_ON_FULL + chunk.length)) > 0) {
        evicted = true;
        continue;
      }
      deps.cache.disk.markFull();
      throw new UpstreamFailure('proxy_internal_error', 502, 'cache disk full; not stored', true);
    }
  }
}
