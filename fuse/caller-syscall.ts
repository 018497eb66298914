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

/** PF_IO_WORKER and PF_KTHREAD (include/linux/sched.h), in the flags of /proc/PID/stat. */
const NOT_A_CALLER = 0x10 | 0x200000;

/**
 * Whether a line of /proc/PID/stat is a task whose syscall file tells the call it serves. An
 * io_uring worker (iou-wrk) runs requests for its ring, and its syscall file holds the registers
 * of the thread that created it, whatever request it runs now; a kernel thread (nfsd) has none.
 */
export function tellsItsCall(statLine: string): boolean {
  const fields = statLine.slice(statLine.lastIndexOf(')') + 2).split(' ');
  const flags = Number(fields[6]);
  return Number.isInteger(flags) && (flags & NOT_A_CALLER) === 0;
}

/** hideForOf the process `pid` (as libfuse saw it: 0 when outside the mount's pid namespace). */
export function callerHideFor(pid: number | undefined): HideFor | undefined {
  if (!pid) return undefined;
  try {
    if (!tellsItsCall(readFileSync(`/proc/${pid}/stat`, 'latin1'))) return undefined;
    return hideForOf(readFileSync(`/proc/${pid}/syscall`, 'latin1'));
  } catch {
    return undefined;
  }
}
