// Files mapped into memory, read-only, through the small addon in lib/native (built by npm's
// postinstall): a body already in the page cache goes to a socket with the kernel's one copy,
// instead of a read into a buffer and then that copy. The page cache is one cache for every
// process of the machine, so what one gateway worker wrote to disk the others serve from it as
// cheaply as from their own memory.
//
// A mapping is made only when every page of it is in memory (mincore), so the event loop never
// waits for the disk; otherwise mapBody answers undefined and the caller reads as before. Where
// the addon could not be built, mapping is off and `mappingUnavailable` says why.
//
// A mapped body must only be written to sockets, never read by JavaScript: a file cut short while
// mapped fails the kernel's write with EFAULT (the answer is cut), but a read in JavaScript past
// the new end would kill the process with SIGBUS.

import { loadAddon } from './native-addon.ts';

interface Addon {
  map(fd: number, length: number): Buffer | null;
  resident(buffer: Buffer): boolean;
  release(buffer: ArrayBuffer): void;
}

const loaded = loadAddon<Addon>('mapped_file');

/** Why bodies cannot be mapped here, or undefined when they can. */
export const mappingUnavailable: string | undefined = loaded.why;

/**
 * The first `length` bytes of the open file `fd`, mapped, or undefined when some of them are not
 * in the page cache, mapping is unavailable, or the map fails (the caller reads instead).
 */
export function mapBody(fd: number, length: number): Buffer | undefined {
  const addon = loaded.addon;
  if (!addon || length <= 0) return undefined;
  try {
    return addon.map(fd, length) ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether every page of a body from mapBody is still in the page cache (the kernel may have
 * dropped some since, or the file may have been cut short: pages past its end are never there).
 */
export function isResident(body: Buffer): boolean {
  return body.length > 0 && loaded.addon?.resident(body) === true;
}

/** Unmaps a body from mapBody once no write uses it; its views become empty. */
export function releaseBody(body: Buffer): void {
  loaded.addon?.release(body.buffer as ArrayBuffer);
}
