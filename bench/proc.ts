// Child processes of a bench run: started in the background, registered for cleanup, stopped by
// PID (never by name). Output is kept so a failed peer's column can say why it failed.

import { type ChildProcess, spawn, type SpawnOptions } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { killPidSync, registerCleanup } from './cleanup.ts';

export interface BenchChild {
  readonly proc: ChildProcess;
  readonly pid: number;
  output(): string;
  /** First match of `pattern` in the output; rejects on timeout or if the process exits first. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray>;
  /** Sends `signal`, SIGKILL after `graceMs`; resolves with the exit code. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<number | null>;
  readonly exited: Promise<number | null>;
  isRunning(): boolean;
}

/** Keeps the last 64 KiB of output: enough for an error message, bounded for chatty peers. */
const OUTPUT_LIMIT = 64 * 1024;

export function startProcess(
  name: string,
  command: string,
  args: readonly string[],
  options: SpawnOptions = {},
): BenchChild {
  const proc = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  if (proc.pid === undefined) throw new Error(`could not start ${command}`);
  const pid = proc.pid;
  let out = '';
  let running = true;
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    out = (out + chunk.toString()).slice(-OUTPUT_LIMIT);
    for (const l of listeners) l();
  };
  proc.stdout?.on('data', onData);
  proc.stderr?.on('data', onData);
  proc.on('error', (err) => onData(Buffer.from(`\n${err.message}\n`)));
  const exited = new Promise<number | null>((resolve) => {
    proc.once('close', (code, signal) => {
      running = false;
      for (const l of listeners) l();
      resolve(code ?? (signal ? 128 : null));
    });
  });
  const stop = async (signal: NodeJS.Signals = 'SIGTERM', graceMs = 10_000) => {
    if (!running) return exited;
    proc.kill(signal);
    const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
    const code = await exited;
    clearTimeout(timer);
    return code;
  };
  const unregister = registerCleanup(
    `${name} (pid ${pid})`,
    () => stop('SIGTERM', 5000).then(() => undefined),
    () => killPidSync(pid),
  );
  exited.then(() => unregister());
  return {
    proc,
    pid,
    exited,
    output: () => out,
    isRunning: () => running,
    stop,
    waitFor(pattern, timeoutMs) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`${name} did not print ${pattern} within ${timeoutMs} ms: ${lastLine(out)}`));
        }, timeoutMs);
        function check(): void {
          const m = pattern.exec(out);
          if (m || !running) {
            clearTimeout(timer);
            listeners.delete(check);
            if (m) resolve(m);
            else reject(new Error(`${name} exited: ${lastLine(out) || 'no output'}`));
          }
        }
        listeners.add(check);
        check();
      });
    },
  };
}

/** The last non-empty line of a process's output, for a one-line failure reason. */
export function lastLine(text: string): string {
  const lines = text.split('\n').map((l) => l.trim());
  return (
    lines
      .filter((l) => l !== '')
      .at(-1)
      ?.slice(0, 300) ?? ''
  );
}

/** Runs a command to completion; resolves with its exit code and output, never rejects. */
export function runCommand(
  command: string,
  args: readonly string[],
  options: SpawnOptions & { timeoutMs?: number } = {},
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const proc = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    let out = '';
    const add = (c: Buffer) => {
      out = (out + c.toString()).slice(-OUTPUT_LIMIT);
    };
    proc.stdout?.on('data', add);
    proc.stderr?.on('data', add);
    const timer =
      options.timeoutMs === undefined ? undefined : setTimeout(() => proc.kill('SIGKILL'), options.timeoutMs);
    proc.once('error', (err) => {
      clearTimeout(timer);
      resolve({ code: 127, output: err.message });
    });
    proc.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output: out });
    });
  });
}

/** Clock ticks per second of /proc/PID/stat's times (USER_HZ, 100 on Linux). */
const USER_HZ = 100;

/**
 * CPU seconds (user + system, all threads) used so far by `pid` and every process below it, read
 * from /proc/PID/stat: a server's own work, whatever share of the machine others take meanwhile.
 */
export function treeCpuSeconds(pid: number): number {
  const parents = new Map<number, number[]>();
  const times = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ppid = Number(f[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(name)]);
      times.set(Number(name), Number(f[11]) + Number(f[12]));
    } catch {
      // Gone between the listing and the read.
    }
  }
  let ticks = 0;
  const walk = (p: number) => {
    ticks += times.get(p) ?? 0;
    for (const c of parents.get(p) ?? []) walk(c);
  };
  walk(pid);
  return ticks / USER_HZ;
}

export interface TreeMemory {
  /** Sum of VmRSS over the process and its children, bytes. */
  readonly rss: number;
  /** Sum of VmHWM (each process's own peak) over the same processes, bytes. */
  readonly hwm: number;
  readonly pids: readonly number[];
}

function statusKiB(status: string, field: string): number {
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
}

/** The primary and its workers (children by /proc/PID/stat's ppid), read now. */
export function treeMemory(pid: number): TreeMemory {
  const pids = [pid];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) pids.push(Number(name));
    } catch {
      // Gone between the listing and the read.
    }
  }
  let rss = 0;
  let hwm = 0;
  for (const p of pids) {
    try {
      const s = readFileSync(`/proc/${p}/status`, 'utf8');
      rss += statusKiB(s, 'VmRSS') * 1024;
      hwm += statusKiB(s, 'VmHWM') * 1024;
    } catch {
      // A worker that just died: the restart count says so.
    }
  }
  return { rss, hwm, pids };
}
