// Which system call the process behind a FUSE request is in, from /proc/PID/syscall. libfuse hides
// an open file (renames it to .fuse_hidden…) both when it is unlinked and before a rename over it,
// in the same kernel request, and the request's opcode does not reach the filesystem; the caller is
// blocked in its system call for the whole request, so that names it. The file needs the right to
// trace the caller (root, or the caller's own user where ptrace is not restricted); without it the
// answer is unknown.

import { readFileSync } from 'node:fs';
import type { HideFor } from './fs/fs-types.ts';

/** System call numbers of the renames and unlinks, per Node's name of the architecture. */
const CALLS: Record<string, { readonly rename: readonly number[]; readonly unlink: readonly number[] }> = {
  // rename, renameat, renameat2; unlink, unlinkat (arch/x86/entry/syscalls/syscall_64.tbl)
  x64: { rename: [82, 264, 316], unlink: [87, 263] },
  // renameat, renameat2; unlinkat (include/uapi/asm-generic/unistd.h)
  arm64: { rename: [38, 276], unlink: [35] },
};

/**
 * The kind of request a hide belongs to, from a line of /proc/PID/syscall ("316 0x… …" while
 * blocked in a call, "running" or "-1 …" otherwise); undefined when it is neither or unknown.
 */
export function hideForOf(syscallLine: string, arch: string = process.arch): HideFor | undefined {
  const calls = CALLS[arch];
  const nr = Number(syscallLine.split(' ', 1)[0]);
  if (!calls || !Number.isInteger(nr) || nr < 0) return undefined;
  if (calls.rename.includes(nr)) return 'rename';
  if (calls.unlink.includes(nr)) return 'unlink';
  return undefined;
}

/** hideForOf the process `pid` (as libfuse saw it: 0 when outside the mount's pid namespace). */
export function callerHideFor(pid: number | undefined): HideFor | undefined {
  if (!pid) return undefined;
  try {
    return hideForOf(readFileSync(`/proc/${pid}/syscall`, 'latin1'));
  } catch {
    return undefined;
  }
}
