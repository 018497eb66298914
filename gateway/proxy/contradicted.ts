// A stored copy its upstream has since contradicted (a revalidation answered with another
// version, or with 404/410) is no copy to serve, not even stale when the upstream fails later
// (RFC 9111 §4.3.3: the full answer is used instead of the stored one).

import type { Logger } from '../../lib/log.ts';
import type { Cache } from '../cache/cache.ts';
import type { EntryMeta } from '../cache/entry.ts';
import type { Target } from './target.ts';

/**
 * Whether a full answer to a revalidation says the stored copy is no longer the resource: a new
 * version (2xx, 3xx) or none at all (404, 410). Other errors (401, 403, 429, 5xx) say nothing
 * about the object. A CVMFS data 404 means "not replicated here yet".
 */
export function contradicts(target: Target, status: number): boolean {
  if (target.cvmfs?.kind === 'data') return false;
  return status < 400 || status === 404 || status === 410;
}

/**
 * The upstream contradicted a stored copy and its answer is not stored in its place: the copy is
 * dropped (in every worker) before the answer goes out, so it is never served again, not even as
 * stale-on-error once the upstream fails. A newer entry stored meanwhile is left alone.
 */
export async function dropContradicted(deps: { cache: Cache; log: Logger }, stale: EntryMeta): Promise<void> {
  const found = deps.cache.lookup(stale.key);
  if (found?.meta.responseTime !== stale.responseTime) return;
  try {
    await deps.cache.invalidate(stale.key);
  } catch (err) {
    deps.log.warn({ err: String(err), url: stale.url }, 'could not drop a stored copy its upstream contradicted');
  }
}
