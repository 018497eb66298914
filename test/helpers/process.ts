// Child processes for tests: started in the background, stopped by PID, never by name.

import { type ChildProcess, spawn, type SpawnOptions } from 'node:child_process';
import { once } from 'node:events';
import { onTeardown, trackPid, untrackPid } from './cleanup.ts';

export interface Child {
  readonly proc: ChildProcess;
  readonly pid: number;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** Resolves with the first match of `pattern` in the output, or rejects after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  /** Sends `signal` and waits for exit; SIGKILL after `graceMs`. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<number | null>;
  readonly exited: Promise<number | null>;
}

export function startChild(command: string, args: readonly string[], options: SpawnOptions = {}): Child {
  const proc = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  if (proc.pid === undefined) throw new Error(`could not start ${command}`);
  const pid = proc.pid;
  trackPid(pid);
  let out = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    out += chunk.toString();
    for (const l of listeners) l();
  };
  proc.stdout?.on('data', onData);
  proc.stderr?.on('data', onData);
  let done = false;
  // 'close' rather than 'exit': by then stdout and stderr are drained, so output() is complete.
  const exited = new Promise<number | null>((resolve) => {
    proc.once('close', (code, signal) => {
      done = true;
      untrackPid(pid);
      for (const l of listeners) l();
      resolve(code ?? (signal ? 128 : null));
    });
  });
  const child: Child = {
    proc,
    pid,
    exited,
    output: () => out,
    waitFor(pattern, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = pattern.exec(out);
          if (m) {
            cleanup();
            resolve(m);
          } else if (done) {
            cleanup();
            reject(new Error(`${command} exited before printing ${pattern}; output:\n${out}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(
            new Error(
              `timed out after ${timeoutMs} ms waiting for ${pattern} from ${command}; output:\n${out}`,
            ),
          );
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
    async stop(signal = 'SIGTERM', graceMs = 10_000) {
      if (done) return exited;
      proc.kill(signal);
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
  onTeardown(() => child.stop('SIGKILL').then(() => undefined));
  return child;
}

/** Node 24 from the package (node_modules/.bin/node), the one npm scripts run under. */
export const NODE = process.execPath;

/** Whether a process with this pid exists (signal 0). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function waitExit(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const [code] = (await once(child, 'exit')) as [number | null];
  return code;
}
