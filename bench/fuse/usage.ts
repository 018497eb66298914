// What a mount process costs the machine while it copies: CPU seconds (user + system, all its
// threads) and peak resident memory, read from /proc/PID/stat and /proc/PID/status. A worker node
// gives that CPU and memory to the mount instead of to its jobs. The process is sampled every
// 100 ms until it exits, because an exited process leaves nothing to read: the figures miss at
// most the last 100 ms of its life.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface ProcessUsage {
  readonly cpuSeconds: number;
  readonly peakRssBytes: number;
}

const SAMPLE_MS = 100;

/** Clock ticks per second, the unit of /proc/PID/stat's times (100 on every common Linux). */
function ticksPerSecond(): number {
  try {
    const n = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(n) && n > 0 ? n : 100;
  } catch {
    return 100;
  }
}

let ticks: number | undefined;

/**
 * utime + stime in seconds, and the start time that tells this process from a later one with the
 * same PID, from a /proc/PID/stat line. The command name (field 2) may contain spaces and
 * parentheses, so fields are counted after its last ')'.
 */
export function readStat(stat: string, perSecond: number): { cpuSeconds: number; startTicks: string } {
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state): utime and stime are fields 14 and 15, starttime field 22.
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  const startTicks = rest[19];
  if (!Number.isFinite(utime) || !Number.isFinite(stime) || startTicks === undefined)
    throw new Error(`unreadable stat line: ${stat}`);
  return { cpuSeconds: (utime + stime) / perSecond, startTicks };
}

/** VmHWM (peak resident set) from /proc/PID/status, in bytes; 0 when absent (a zombie). */
export function peakRssFromStatus(status: string): number {
  const m = /^VmHWM:\s+(\d+)\s+kB$/m.exec(status);
  return m ? Number(m[1]) * 1024 : 0;
}

export interface UsageSampler {
  /** The last sample; undefined when the process was gone before the first. */
  last(): ProcessUsage | undefined;
  stop(): void;
}

export function sampleUsage(pid: number): UsageSampler {
  ticks ??= ticksPerSecond();
  const perSecond = ticks;
  let last: ProcessUsage | undefined;
  let started: string | undefined;
  const sample = () => {
    try {
      const { cpuSeconds, startTicks } = readStat(readFileSync(`/proc/${pid}/stat`, 'utf8'), perSecond);
      // Once reaped, the PID may belong to another process.
      if ((started ??= startTicks) !== startTicks) return;
      const peakRssBytes = peakRssFromStatus(readFileSync(`/proc/${pid}/status`, 'utf8'));
      // A zombie reports no memory: keep the peak seen while it was alive.
      last = { cpuSeconds, peakRssBytes: Math.max(peakRssBytes, last?.peakRssBytes ?? 0) };
    } catch {
      // Exited between samples: the previous sample stands.
    }
  };
  sample();
  const timer = setInterval(sample, SAMPLE_MS);
  timer.unref();
  return {
    last: () => last,
    stop: () => clearInterval(timer),
  };
}
