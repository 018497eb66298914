// Disk entries' bodies held mapped from the page cache (lib/mapped-file.ts), so that a disk hit
// on a body the kernel still holds costs what a memory hit does: no read, no copy into the
// process, no trip through the thread pool. The page cache is one for the whole machine, so what
// one worker stored every worker serves from it, where the memory tier holds a copy per worker.
//
// Held by the entry file's path: every stored version of a response gets a file of its own name
// (disk-files.ts), so a path never names two versions. A mapping is let go when its entry leaves
// the index (drop), when pushed out by newer ones (MAX_BYTES of address space, MAX_BODIES
// mappings), or when its file is found cut short, replaced or no longer all in the page cache; it
// is unmapped once the last answer using it has closed. Until then the file's blocks stay
// allocated, as for any open file. Each answer holds a descriptor of the file while it writes, as
// an answer read from disk does, so that a cut is seen even once the file is removed.
//
// A body is lent in two parts: all but its last TAIL bytes as the mapping, and those last bytes
// as a copy read when it was mapped. A file cut by another program reads as zeros past the cut
// through a mapping, without any error where the cut falls inside a page; so an answer writes the
// mapping first, then asks `intact()`, and only then ends with the copy (hit.ts, serveMapped). An
// answer whose file was cut meanwhile never looks complete.

import { close, closeSync, constants as fsc, fstatSync, open, openSync, read } from 'node:fs';
import { promisify } from 'node:util';
import { isResident, mapBody, mappingUnavailable, releaseBody } from '../../lib/mapped-file.ts';

/**
 * Bodies up to this size are mapped; larger ones are read in slices, so that a page the kernel
 * drops during a long send is read by the thread pool rather than waited for on the event loop.
 * CVMFS chunks are at most 16 MiB by default.
 */
export const MAP_MAX = 16 * 2 ** 20;
/** The body's last bytes, sent from a copy once the rest is seen whole; smaller bodies are read. */
export const TAIL = 64;
/** Address space held per process. Not memory: the pages are the page cache's, shared. */
const MAX_BYTES = 2 * 2 ** 30;
/** Mappings held per process; far below the kernel's default of 65,530 per process. */
const MAX_BODIES = 8192;

interface Held {
  readonly path: string;
  /** The mapping: the body but its last TAIL bytes. */
  readonly body: Buffer;
  readonly tail: Buffer;
  /** The body's length. */
  readonly size: number;
  /** The mapped file's inode: a file put in its place by another program is mapped anew. */
  readonly ino: number;
  users: number;
  dropped: boolean;
}

/** A mapped body lent to one answer: call `done` once nothing uses it (more calls are ignored). */
export interface Lent {
  /** All but the body's last TAIL bytes, mapped: only ever handed to socket writes. */
  readonly body: Buffer;
  /** The body's last TAIL bytes, a copy. */
  readonly tail: Buffer;
  readonly done: () => void;
  /** Whether the mapped file still holds the whole body (asked of the answer's own descriptor). */
  readonly intact: () => boolean;
}

/** As disk-files.ts opens entry files: never through a link, never waiting on a FIFO. */
const ENTRY_FLAGS = fsc.O_RDONLY | fsc.O_NONBLOCK | fsc.O_NOFOLLOW;
const openAsync = promisify(open);
const readAsync = promisify(read);

/**
 * The mapped body of the entry file at `path`, and the descriptor the first answer keeps (see
 * Lent.intact); see MappedBodies.lend.
 */
async function mapFile(path: string, size: number): Promise<{ held: Omit<Held, 'users' | 'dropped'>; fd: number } | 'gone' | undefined> {
  let fd: number;
  try {
    fd = await openAsync(path, ENTRY_FLAGS);
  } catch {
    return 'gone';
  }
  try {
    // fstat of an open file reads no disk.
    const st = fstatSync(fd);
    if (!st.isFile() || st.size < size) throw new Error('not the whole body');
    const tail = Buffer.allocUnsafe(TAIL);
    if ((await readAsync(fd, tail, 0, TAIL, size - TAIL)).bytesRead < TAIL) throw new Error('cut short');
    const body = mapBody(fd, size - TAIL);
    if (!body) {
      close(fd, () => undefined);
      return undefined;
    }
    return { held: { path, body, tail, size, ino: st.ino }, fd };
  } catch {
    close(fd, () => undefined);
    return 'gone';
  }
}

/**
 * The file at a held mapping's path opened again, when it is still the file held with the whole
 * body; undefined when it was removed, cut or replaced. An open of a path just served finds it in
 * the kernel's caches (its inode is held by the mapping), so it is made without the thread pool.
 */
function reopen(h: Held): number | undefined {
  let fd: number;
  try {
    fd = openSync(h.path, ENTRY_FLAGS);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (st.isFile() && st.ino === h.ino && st.size >= h.size) return fd;
  } catch {
    // Answered below.
  }
  closeSync(fd);
  return undefined;
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
   * The body of the entry file at `path` (`size` bytes), mapped: `gone` when the file vanished,
   * is not a regular file or is shorter than its body (the entry is damaged); undefined when the
   * body is too small or too large to map, not all in the page cache, or mapping is unavailable
   * (the caller reads it instead). `indexed` says whether the entry is still in the index once the
   * file is mapped: if it left meanwhile, the mapping serves this answer and is not kept.
   */
  async lend(path: string, size: number, indexed: () => boolean): Promise<Lent | 'gone' | undefined> {
    const held = this.#use(path);
    if (held) return held;
    if (size <= TAIL || size > MAP_MAX || mappingUnavailable !== undefined) return undefined;
    const mapped = await mapFile(path, size);
    if (mapped === 'gone' || !mapped) return mapped;
    // Mapped twice by answers that came together: the first one is kept.
    const again = this.#use(path);
    if (again) {
      releaseBody(mapped.held.body);
      close(mapped.fd, () => undefined);
      return again;
    }
    const h: Held = { ...mapped.held, users: 0, dropped: !indexed() };
    if (!h.dropped) {
      this.#held.set(path, h);
      this.#bytes += h.body.length;
      this.#trim();
    }
    return this.#lend(h, mapped.fd);
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
    // Cut short since (mincore cannot tell: the page holding the cut stays in the page cache), or
    // replaced or removed: let go, and opened again by the caller.
    const fd = reopen(h);
    if (fd === undefined || !isResident(h.body)) {
      if (fd !== undefined) closeSync(fd);
      this.drop(path);
      return undefined;
    }
    this.#held.delete(path);
    this.#held.set(path, h);
    return this.#lend(h, fd);
  }

  /** Lends `h` to one answer, which keeps `fd` (the mapped file) open until it is done. */
  #lend(h: Held, fd: number): Lent {
    h.users++;
    let returned = false;
    const done = () => {
      if (returned) return;
      returned = true;
      closeSync(fd);
      h.users--;
      if (h.dropped && h.users === 0) releaseBody(h.body);
    };
    // By the descriptor: a file removed after it was cut is still seen cut.
    const intact = () => {
      if (returned) return false;
      try {
        return fstatSync(fd).size >= h.size;
      } catch {
        return false;
      }
    };
    return { body: h.body, tail: h.tail, done, intact };
  }

  #trim(): void {
    for (const path of this.#held.keys()) {
      if (this.#bytes <= this.#maxBytes && this.#held.size <= this.#maxBodies) return;
      this.drop(path);
    }
  }
}
