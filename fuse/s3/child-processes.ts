// The processes this one started, from Linux's /proc: the AWS SDK runs a profile's
// credential_process with child_process.exec and no time limit, and hands out no handle to it.
// One that never answers would be left running, and its pipes keep this process alive after it
// gave up on it; credentials.ts ends the ones that appeared while it waited.

import { readdirSync, readFileSync } from 'node:fs';

function childrenOf(pid: number | 'self'): number[] {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const task of tasks) {
    try {
      for (const word of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' '))
        if (/^\d+$/.test(word)) out.push(Number(word));
    } catch {
      // The task ended meanwhile.
    }
  }
  return out;
}

/** This process's children now. */
export function ownChildren(): Set<number> {
  return new Set(childrenOf('self'));
}

/** Kills the children not in `before`, and everything they started. */
export function killChildrenSince(before: ReadonlySet<number>): void {
  const doomed = [...ownChildren()].filter((pid) => !before.has(pid));
  for (let i = 0; i < doomed.length; i++) doomed.push(...childrenOf(doomed[i]!));
  for (const pid of doomed) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}
