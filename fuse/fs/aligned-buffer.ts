// Part buffers that the local copy of sent parts can write to disk with direct I/O.
//
// Writing a sent part into the staging file through the page cache costs what the cache disk's
// file system charges for new blocks while it writes back earlier ones: on ext4, 1.5 s of system
// CPU per GB, two thirds of an upload's CPU (docs/BENCHMARKING.md, "Upload memory and the local
// copy"). The same bytes written with O_DIRECT cost 0.04 s. Direct I/O asks that the memory be
// aligned to the device's block size, and Node gives no aligned allocation: a large Buffer comes
// from malloc, 16 bytes past a page boundary, and the kernel refuses it (EINVAL). A WebAssembly
// memory is mapped by V8 on its own pages, so a Buffer over one starts on a page boundary.
//
// Each such memory reserves 8 GiB of address space (V8's guard regions; only the pages written
// are resident). Under an address-space limit (`ulimit -v`, common in batch jobs) that would
// crowd out everything else, so there, and wherever a memory cannot be had, the buffer is a plain
// one and the copy goes through the page cache as before (StagingFile.writeThrough).

import { readFileSync } from 'node:fs';

/** A WebAssembly page: memories come in whole pages. */
const WASM_PAGE = 65536;
/** The largest memory a 32-bit WebAssembly memory may have (65,536 pages). */
const WASM_MAX = 2 ** 32;
/**
 * Smaller buffers stay plain. Parts are at least 5 MiB (S3's minimum), and the 1 MiB buffers
 * that carry small staged files up never meet direct I/O; this bounds the reservations to one per
 * 4 MiB of the memory budget (a 16 GiB budget: 4,096 of 8 GiB, a third of the 128 TiB a process
 * may map).
 */
const ALIGNED_MIN = 4 * 2 ** 20;

/** Whether this process may reserve address space freely (no RLIMIT_AS). */
function addressSpaceUnlimited(): boolean {
  try {
    const line = /^Max address space\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return line?.[1] === 'unlimited';
  } catch {
    return false;
  }
}

/** The one piece of WebAssembly used here (the project's TypeScript libraries do not declare it). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
const { WebAssembly } = globalThis as unknown as {
  WebAssembly: { Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory };
};

let pageAligned: boolean | undefined;

/**
 * A Buffer of `size` bytes (contents undefined) that starts on a page boundary when it can; a
 * plain one otherwise. The caller must not rely on the alignment: direct I/O checks it.
 */
export function alignedBuffer(size: number): Buffer {
  pageAligned ??= addressSpaceUnlimited();
  if (pageAligned && size >= ALIGNED_MIN && size % WASM_PAGE === 0 && size < WASM_MAX) {
    const pages = size / WASM_PAGE;
    try {
      return Buffer.from(new WebAssembly.Memory({ initial: pages, maximum: pages }).buffer);
    } catch {
      // Address space or memory ran out: a plain buffer still serves.
    }
  }
  return Buffer.allocUnsafeSlow(size);
}
