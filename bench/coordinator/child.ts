// One simulated run as a child process, the way every bench scenario runs its tool:
// `estuary coordinator simulate FILE --json --controller … --sim-market … --sim-every …`. The
// bench reads the JSON it prints and imports nothing of the coordinator. A scenario file the
// simulator refuses comes back as the child's one-line error.

import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { SimResult } from '../../lib/sim-result.ts';

const BIN = fileURLToPath(new URL('../../bin/estuary.js', import.meta.url));

/** What `estuary coordinator simulate --json` prints: the run, and what the child measured of itself. */
export interface SimRecord extends SimResult {
  readonly cpuMs: number;
  /** The child's peak resident memory. */
  readonly peakRssMb: number;
  readonly sellsSpot: boolean;
  readonly sites: readonly { readonly name: string; readonly costPerCoreHour: number; readonly spotPerCoreHour?: number }[];
}

export interface ChildRun {
  readonly file: string;
  /** The controller setting, as `--controller` takes it (defaults filled in by the child). */
  readonly controller: Readonly<Record<string, unknown>>;
  readonly market: 'as-configured' | 'spot' | 'on-demand';
  readonly every: number;
}

/** JSON has no NaN: a figure that could not be measured (no job ran) comes back as null. */
const nan = (x: unknown): number => (typeof x === 'number' ? x : NaN);

export function simulateChild(run: ChildRun, signal: AbortSignal): Promise<SimRecord> {
  const args = [BIN, 'coordinator', 'simulate', run.file, '--json', '--controller', JSON.stringify(run.controller), '--sim-market', run.market, '--sim-every', String(run.every)];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { maxBuffer: 256 * 1024 * 1024, signal }, (err, stdout, stderr) => {
      if (err) {
        const line = stderr.trim().split('\n').pop() || (err as Error).message;
        reject(new Error(line));
        return;
      }
      const r = JSON.parse(stdout) as SimRecord;
      resolve({ ...r, makespanS: nan(r.makespanS), meanWaitS: nan(r.meanWaitS), p95WaitS: nan(r.p95WaitS) });
    });
  });
}

/** Runs the tasks at most `width` at a time; results in the tasks' order. */
export async function pool<T>(tasks: readonly (() => Promise<T>)[], width: number): Promise<T[]> {
  const out: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      out[i] = await tasks[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, tasks.length) }, worker));
  return out;
}
