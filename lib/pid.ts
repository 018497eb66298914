// Whether a process id names a live process, for lock files and per-process directories left by
// a process that may have died with kill -9.

/** True when `pid` runs (EPERM: it runs, as another user's process). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
