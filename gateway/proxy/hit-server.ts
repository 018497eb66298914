// Serving a stored entry: from memory within the call, or from its disk file (read whole into
// memory first when it earns a place there). An entry whose file vanished is forgotten and the
// request goes upstream instead.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Found } from '../cache/cache.ts';
import type { EntryMeta } from '../cache/entry.ts';
import { ageNow } from '../cache/freshness.ts';
import { type ServeOptions, serveMapped, serveMemory, serveStored } from './hit.ts';
import { pass, type PassDeps } from './pass.ts';
import type { Target } from './target.ts';

/**
 * Up to this size a disk entry that earns a place in memory is read whole first and served from
 * that copy (one read instead of two); a larger one streams at once while its copy is read, so its
 * first byte does not wait for the whole read. CVMFS chunks are at most 16 MiB by default.
 */
const PROMOTE_INLINE_MAX = 16 * 1024 * 1024;
/** Up to this size a disk hit that earns a place in memory is promoted rather than mapped. */
const PROMOTE_FIRST_MAX = 1024 * 1024;

/**
 * A GET whose answer is the whole body, the only kind a mapping serves. A HEAD, a range and a
 * conditional GET (which may be a 304) are planned before their file is opened (hit.ts), so an
 * answer without a body never waits on the cache's file system.
 */
function wantsWholeBody(req: IncomingMessage): boolean {
  const h = req.headers;
  return req.method === 'GET' && h.range === undefined && h['if-none-match'] === undefined && h['if-modified-since'] === undefined;
}

export class HitServer {
  readonly #d: PassDeps;

  constructor(deps: PassDeps) {
    this.#d = deps;
  }

  /**
   * Serves a stored entry: from memory within this call; from disk (or read into memory first,
   * when it earns a place there) once read. A vanished file is forgotten and goes upstream.
   */
  serve(
    req: IncomingMessage,
    res: ServerResponse,
    target: Target,
    found: Found,
    cacheStatus: string,
    quiet = false,
  ): Promise<void> | void {
    const d = this.#d;
    if (found.tier === 'memory') {
      serveMemory(req, res, found, this.#options(found.meta, cacheStatus, target));
      if (!quiet) d.metrics.memoryHit.inc();
      return;
    }
    return this.#disk(req, res, target, found, cacheStatus, quiet);
  }

  #options(meta: EntryMeta, cacheStatus: string, target: Target): ServeOptions {
    const age = ageNow(meta, Date.now(), this.#d.heuristicMaxS);
    return { age, cacheStatus, onBytes: this.#onBytes, s3: target.sign !== undefined };
  }

  readonly #onBytes = (n: number): void => this.#d.metrics.bytesOut.inc(n);

  async #disk(
    req: IncomingMessage,
    res: ServerResponse,
    target: Target,
    stored: Found & { tier: 'disk' },
    cacheStatus: string,
    quiet: boolean,
  ): Promise<void> {
    const d = this.#d;
    // A whole body from the page cache, when all of it is there: a large one costs what a memory
    // hit does, so it is not promoted (that would only trade one large body held in memory for
    // another); a small one that earns a place in memory is promoted, since its hits then skip
    // the open, the checks and the second write a mapped answer takes.
    const onDamaged = () => void d.cache.invalidate(stored.meta.key);
    const admitted = d.cache.admits(stored.meta.key, stored.meta.size);
    if (wantsWholeBody(req) && !(admitted && stored.meta.size <= PROMOTE_FIRST_MAX)) {
      const indexed = () => d.cache.disk.peek(stored.meta.key)?.path === stored.path;
      const lent = await d.cache.mapped.lend(stored.path, stored.meta.size, indexed);
      if (lent === 'gone') return this.#gone(req, res, target, stored);
      if (lent) {
        serveMapped(req, res, stored.meta, lent, { ...this.#options(stored.meta, cacheStatus, target), onDamaged });
        if (!quiet) d.metrics.diskHit.inc();
        return;
      }
    }
    let found: Found = stored;
    if (admitted) {
      const promoted = d.cache.promoteFromDisk(stored.meta.key, stored.path);
      if (stored.meta.size > PROMOTE_INLINE_MAX) promoted.catch(() => undefined);
      else {
        const copy = await promoted;
        if (!copy) return this.#gone(req, res, target, stored);
        found = { tier: 'memory', meta: copy.meta, body: copy.body };
      }
    }
    // A file cut short under a hit is dropped, so only that one answer is cut.
    if (!(await serveStored(req, res, found, { ...this.#options(found.meta, cacheStatus, target), onDamaged }))) {
      return this.#gone(req, res, target, found);
    }
    if (!quiet) d.metrics.diskHit.inc();
  }

  /** A stored entry whose file vanished: forgotten, and the request goes upstream instead. */
  #gone(req: IncomingMessage, res: ServerResponse, target: Target, found: Found): Promise<void> {
    void this.#d.cache.invalidate(found.meta.key);
    return pass(this.#d, req, res, target, 'miss', false);
  }
}
