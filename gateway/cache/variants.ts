// Finds the stored variant of a URL that a request selects (the key scheme is in vary.ts).

import { basename } from 'node:path';
import type { HeaderMap } from '../http/headers.ts';
import type { Cache, Found } from './cache.ts';
import { selectionMatches, variantKey } from './vary.ts';

/**
 * The key a request's variant lives (or will live) under, and the stored response there if it
 * matches. Without Vary, or when the URL's first entry matches, that is the URL's own key.
 */
export function findVariant(cache: Cache, base: string, req: HeaderMap): { key: string; found?: Found } {
  const first = cache.lookup(base);
  if (!first) return { key: base };
  if (selectionMatches(first.meta.vary, req)) return { key: base, found: first };
  const file = cache.disk.peek(base)?.path;
  // Memory holds copies of disk entries only; without the disk entry the variant set is gone.
  if (file === undefined) return { key: base };
  const key = variantKey(base, basename(file), Object.keys(first.meta.vary ?? {}), req);
  const found = cache.lookup(key);
  return found && selectionMatches(found.meta.vary, req) ? { key, found } : { key };
}
