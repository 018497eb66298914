// Everything a bench run starts or creates — child processes, mounts, namespaces, veth pairs — is
// registered here the moment it exists, and undone in reverse order when the run ends, whether it
// finished, failed or was interrupted. If the process dies before that (an uncaught error, a
// second Ctrl-C), the synchronous exit hook still kills the children and lazily unmounts, so no
// FUSE mount ends as "Transport endpoint is not connected" and no server keeps its port.

import { spawnSync } from 'node:child_process';

type Undo = () => Promise<void> | void;

interface Entry {
  readonly what: string;
  readonly undo: Undo;
  /** A last-resort synchronous form for process exit (kill by PID, umount -l, ip netns del). */
  readonly emergency?: () => void;
}

const entries: Entry[] = [];
let hooked = false;

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.once('exit', () => {
    for (const e of entries.splice(0).reverse()) {
      try {
        e.emergency?.();
      } catch {
        // Best effort at exit: nothing else can be done from here.
      }
    }
  });
}

/** Registers an undo step; call the returned function to run it early (and drop it). */
export function registerCleanup(what: string, undo: Undo, emergency?: () => void): () => Promise<void> {
  hookExit();
  const entry: Entry = { what, undo, emergency };
  entries.push(entry);
  return async () => {
    const i = entries.indexOf(entry);
    if (i < 0) return;
    entries.splice(i, 1);
    await entry.undo();
  };
}

/** Runs every registered undo step, newest first; returns what could not be undone. */
export async function runCleanups(): Promise<string[]> {
  const failed: string[] = [];
  while (entries.length > 0) {
    const e = entries.pop()!;
    try {
      await e.undo();
    } catch (err) {
      failed.push(`${e.what}: ${(err as Error).message}`);
      try {
        e.emergency?.();
      } catch {
        // Reported above.
      }
    }
  }
  return failed;
}

export function pendingCleanups(): number {
  return entries.length;
}

export function killPidSync(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

export function lazyUnmountSync(path: string): void {
  spawnSync('umount', ['-l', path], { stdio: 'ignore' });
}
