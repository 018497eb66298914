// Disk entries' bodies held mapped from the page cache (lib/mapped-file.ts), so that a disk hit
// on a body the kernel still holds costs about what a memory hit does: no read and no copy into
// the process, only the open, fstat and close every disk hit makes. The page cache is one for the
// whole machine, so what one worker stored every worker serves from it, where the memory tier
// holds a copy per worker.
//
// Held by the entry file's path: every stored version of a response gets a file of its own name
// (disk-files.ts), so a path never names two versions. A mapping is let go when its entry leaves
// the index (drop), when pushed out by newer ones (MAX_BYTES of address space, MAX_BODIES
// mappings), or when its file is found cut short, replaced, rewritten or no longer all in the
// page cache; it is unmapped once the last answer using it has closed. Until then the file's
// blocks stay allocated, as for any open file, and the mapping counts in `bytes` and `count` and
// against the limits: a body that would pass them while answers still write from the others is
// read instead of mapped, so stalled clients cannot make a worker hold more than the limits. Each answer holds a descriptor of the file while it writes, as
// an answer read from disk does, so that a cut is seen even once the file is removed.
//
// A body is lent in two parts: all but its last TAIL bytes as the mapping, and those last bytes
// as a copy read when it was mapped. A file cut by another program reads as zeros past the cut
// through a mapping, without any error where the cut falls inside a page; so an answer writes the
// mapping first, then asks `intact()`, and only then ends with the copy (hit.ts, serveMapped). An
// answer whose file was cut meanwhile never looks complete.

import { close, fstat, open, read, type Stats } from 'node:fs';
import { promisify } from 'node:util';
import { isResident, mapBody, mappingUnavailable, releaseBody } from '../../lib/mapped-file.ts';
import { ENTRY_OPEN } from './disk-files.ts';

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
  /** The mapped file's inode and change time: a file replaced, or rewritten in place, is mapped anew. */
  readonly ino: number;
  readonly ctimeMs: number;
  users: number;
  /** Let go: unmapped once its last answer is done, no longer lent to new ones. */
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
  readonly intact: () => Promise<boolean>;
}

// Every call on the file goes through the thread pool, as a read's do: on a hung file system
// (a stalled FUSE daemon, a dead NFS server) an answer waits, the worker does not.
const openAsync = promisify(open);
const fstatAsync = promisify(fstat);
const readAsync = promisify(read);
const closeLater = (fd: number) => close(fd, () => undefined);

/** The file at `path` opened as an entry file is, with its attributes; undefined when it cannot be. */
async function openFile(path: string): Promise<{ fd: number; st: Stats } | undefined> {
  let fd: number;
  try {
    fd = await openAsync(path, ENTRY_OPEN);
  } catch {
    return undefined;
  }
  try {
    const st = await fstatAsync(fd);
    if (st.isFile()) return { fd, st };
  } catch {
    // Answered below.
  }
  closeLater(fd);
  return undefined;
}

/** The mapped body of the open entry file `fd`; see MappedBodies.lend. */
async function mapFile(path: string, fd: number, st: Stats, size: number): Promise<Omit<Held, 'users' | 'dropped'> | 'gone' | undefined> {
  const tail = Buffer.allocUnsafe(TAIL);
  try {
    if ((await readAsync(fd, tail, 0, TAIL, size - TAIL)).bytesRead < TAIL) return 'gone';
  } catch {
    return 'gone';
  }
  const body = mapBody(fd, size - TAIL);
  return body && { path, body, tail, size, ino: st.ino, ctimeMs: st.ctimeMs };
}

export class MappedBodies {
  /** In order of last use, oldest first. */
  readonly #held = new Map<string, Held>();
  /** Address space of every mapping not yet unmapped: held, and let go but still written from. */
  #bytes = 0;
  /** Mappings let go that answers still write from. */
  #lingering = 0;
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
    if (size <= TAIL || size > MAP_MAX || mappingUnavailable !== undefined) return undefined;
    // Each answer opens the file, as a read does: a cut, removed or replaced file is seen, and a
    // cut during the answer is seen by this descriptor even once the file is removed.
    const opened = await openFile(path);
    if (!opened || opened.st.size < size) {
      if (opened) closeLater(opened.fd);
      this.drop(path);
      return 'gone';
    }
    const { fd, st } = opened;
    const held = this.#held.get(path);
    if (held) {
      // Replaced, rewritten in place (a new change time; a revalidation's new trailer too), or its
      // pages dropped (mincore): let go, and mapped anew below.
      if (held.ino === st.ino && held.ctimeMs === st.ctimeMs && isResident(held.body)) return this.#lend(this.#touch(held), fd);
      this.drop(path);
    }
    const mapped = await mapFile(path, fd, st, size);
    if (mapped === 'gone' || !mapped) {
      closeLater(fd);
      if (mapped === 'gone') this.drop(path);
      return mapped;
    }
    // Mapped twice by answers that came together: the one held first is kept when it is the same.
    const again = this.#held.get(path);
    if (again && again.ino === mapped.ino && again.ctimeMs === mapped.ctimeMs) {
      releaseBody(mapped.body);
      return this.#lend(this.#touch(again), fd);
    }
    if (again) this.drop(path);
    if (!this.#makeRoom(mapped.body.length)) {
      releaseBody(mapped.body);
      closeLater(fd);
      return undefined;
    }
    const h: Held = { ...mapped, users: 0, dropped: !indexed() };
    this.#bytes += h.body.length;
    if (h.dropped) this.#lingering++;
    else this.#held.set(path, h);
    return this.#lend(h, fd);
  }

  /** Lets go of the mapping of `path`: its entry left the index, or its file changed. */
  drop(path: string): void {
    const h = this.#held.get(path);
    if (!h) return;
    this.#held.delete(path);
    h.dropped = true;
    if (h.users === 0) this.#unmap(h);
    else this.#lingering++;
  }

  /** Address space held by mappings, also those let go that answers still write from. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Mappings held, also those let go that answers still write from. */
  get count(): number {
    return this.#held.size + this.#lingering;
  }

  #unmap(h: Held): void {
    this.#bytes -= h.body.length;
    releaseBody(h.body);
  }

  /** Marks `h` as the most recently used. */
  #touch(h: Held): Held {
    this.#held.delete(h.path);
    this.#held.set(h.path, h);
    return h;
  }

  /** Lends `h` to one answer, which keeps `fd` (the mapped file) open until it is done. */
  #lend(h: Held, fd: number): Lent {
    h.users++;
    let returned = false;
    const done = () => {
      if (returned) return;
      returned = true;
      closeLater(fd);
      h.users--;
      if (h.dropped && h.users === 0) {
        this.#lingering--;
        this.#unmap(h);
      }
    };
    // By the descriptor: a file removed after it was cut is still seen cut.
    const intact = async () => {
      if (returned) return false;
      try {
        return (await fstatAsync(fd)).size >= h.size;
      } catch {
        return false;
      }
    };
    return { body: h.body, tail: h.tail, done, intact };
  }

  /**
   * Lets go of the least recently used mappings no answer writes from until one of `n` bytes fits
   * the limits; false when it cannot, because answers still write from the others.
   */
  #makeRoom(n: number): boolean {
    const fits = () => this.#bytes + n <= this.#maxBytes && this.count < this.#maxBodies;
    for (const [path, h] of this.#held) {
      if (fits()) return true;
      if (h.users === 0) this.drop(path);
    }
    return fits();
  }
}
