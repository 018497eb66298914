// Disk entries' bodies held mapped from the page cache (lib/mapped-file.ts), so that a disk hit
// on a body the kernel still holds costs what a memory hit does: no read, no copy into the
// process, no trip through the thread pool, one write to the socket. The page cache is one for
// the whole machine, so what one worker stored every worker serves from it, where the memory tier
// holds a copy per worker.
//
// Held by the entry file's path: every stored version of a response gets a file of its own name
// (disk-files.ts), so a path never names two versions. A mapping is let go when its entry leaves
// the index (drop), when pushed out by newer ones (MAX_BYTES of address space, MAX_BODIES
// mappings), or when found cut short, replaced or no longer all in the page cache; it is unmapped
// once the last write using it has finished. Until then the file's blocks stay allocated, as for any open file.

import { open } from 'node:fs/promises';
import { fstatSync, statSync } from 'node:fs';
import { isResident, mapBody, mappingUnavailable, releaseBody } from '../../lib/mapped-file.ts';

/**
 * Bodies up to this size are mapped; larger ones are read in slices, so that a page the kernel
 * drops during a long send is read by the thread pool rather than waited for on the event loop.
 * CVMFS chunks are at most 16 MiB by default.
 */
export const MAP_MAX = 16 * 2 ** 20;
/** Address space held per process. Not memory: the pages are the page cache's, shared. */
const MAX_BYTES = 2 * 2 ** 30;
/** Mappings held per process; far below the kernel's default of 65,530 per process. */
const MAX_BODIES = 8192;

/** The first `size` bytes of the file at `path`, mapped, with its inode; see MappedBodies.lend. */
async function mapFile(path: string, size: number): Promise<{ body: Buffer; ino: number } | 'gone' | undefined> {
  try {
    const fh = await open(path, 'r');
    try {
      // fstat of an open file reads no disk.
      const st = fstatSync(fh.fd);
      if (st.size < size) return 'gone';
      const body = mapBody(fh.fd, size);
      return body && { body, ino: st.ino };
    } finally {
      // The mapping outlives the descriptor.
      void fh.close().catch(() => undefined);
    }
  } catch {
    return 'gone';
  }
}

interface Held {
  readonly body: Buffer;
  /** The mapped file's inode: a file put in its place by another program is mapped anew. */
  readonly ino: number;
  users: number;
  dropped: boolean;
}

/** A mapped body lent to one answer: call `done` once no write uses it (more calls are ignored). */
export interface Lent {
  readonly body: Buffer;
  readonly done: () => void;
}

export class MappedBodies {
  /** In order of last use, oldest first. */
  readonly #held = new Map<string, Held>();
  #bytes = 0;
  readonly #maxBytes: number;
  readonly #maxBodies: number;

  constructor(maxBytes = MAX_BYTES, maxBodies = MAX_BODIES) {
    this.#maxBytes = maxBytes;
    this.#maxBodies = maxBodies;
  }

  /** Why bodies are read rather than mapped in this process, or undefined when they are mapped. */
  get unavailable(): string | undefined {
    return mappingUnavailable;
  }

  /**
   * The body of the entry file at `path` (`size` bytes), mapped: `gone` when the file vanished or
   * is shorter than its body (the entry is damaged); undefined when the body is too large to map,
   * not all in the page cache, or mapping is unavailable (the caller reads it instead).
   */
  async lend(path: string, size: number): Promise<Lent | 'gone' | undefined> {
    const held = this.#use(path);
    if (held) return held;
    if (size <= 0 || size > MAP_MAX || mappingUnavailable !== undefined) return undefined;
    const mapped = await mapFile(path, size);
    if (mapped === 'gone' || !mapped) return mapped;
    const { body, ino } = mapped;
    // Mapped twice by answers that came together: the first one is kept.
    const again = this.#use(path);
    if (again) {
      releaseBody(body);
      return again;
    }
    const h: Held = { body, ino, users: 0, dropped: false };
    this.#held.set(path, h);
    this.#bytes += size;
    this.#trim();
    return this.#lend(h);
  }

  /** Lets go of the mapping of `path`: its entry left the index, or its file changed. */
  drop(path: string): void {
    const h = this.#held.get(path);
    if (!h) return;
    this.#held.delete(path);
    this.#bytes -= h.body.length;
    h.dropped = true;
    if (h.users === 0) releaseBody(h.body);
  }

  /** Address space held by mappings. */
  get bytes(): number {
    return this.#bytes;
  }

  get count(): number {
    return this.#held.size;
  }

  #use(path: string): Lent | undefined {
    const h = this.#held.get(path);
    if (!h) return undefined;
    // Cut short since (mincore cannot tell: a large folio cut in the middle stays whole in the
    // page cache), or replaced: let go, and opened again by the caller. A stat of a path just
    // served finds its directory entry in the kernel's cache.
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st || st.size < h.body.length || st.ino !== h.ino || !isResident(h.body)) {
      this.drop(path);
      return undefined;
    }
    this.#held.delete(path);
    this.#held.set(path, h);
    return this.#lend(h);
  }

  #lend(h: Held): Lent {
    h.users++;
    let returned = false;
    const done = () => {
      if (returned) return;
      returned = true;
      h.users--;
      if (h.dropped && h.users === 0) releaseBody(h.body);
    };
    return { body: h.body, done };
  }

  #trim(): void {
    for (const path of this.#held.keys()) {
      if (this.#bytes <= this.#maxBytes && this.#held.size <= this.#maxBodies) return;
      this.drop(path);
    }
  }
}
