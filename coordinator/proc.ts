// Runs an external program (squeue, scontrol, ip, an admin's script) with a deadline, and hands
// back its exit status and output. Never through a shell unless the caller asks for one.

import { spawn } from 'node:child_process';

export interface ProcResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface ProcOptions {
  readonly timeoutMs?: number;
  readonly env?: NodeJS.ProcessEnv;
  readonly input?: string;
}

/** Process groups of programs still running, so a stop past its deadline can end them. */
const running = new Set<number>();

/**
 * Kills every program runProgram started that is still running, with all it started: a stop
 * that reached its deadline must not wait for a hanging squeue or site script (up to their
 * timeouts). What they were doing is persisted first, so the next start picks it up.
 */
export function killRunningPrograms(): number {
  const n = running.size;
  for (const pid of running) killGroup(pid);
  return n;
}

export function runProgram(file: string, args: readonly string[], o: ProcOptions = {}): Promise<ProcResult> {
  return new Promise((resolve, reject) => {
    // Its own process group, so a timeout ends everything it started (an admin's script runs
    // `/bin/sh -c`, whose children would otherwise outlive the kill and pile up under PID 1).
    const child = spawn(file, args, { env: o.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    const pid = child.pid;
    if (pid !== undefined) running.add(pid);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => {
      killGroup(child.pid);
      const said = complaint({ code: 0, stdout: '', stderr });
      reject(new Error(`${file} ${args.join(' ')}: no answer in ${o.timeoutMs} ms${stderr.trim() ? ` (it said: ${said})` : ''}`));
    }, o.timeoutMs ?? 30_000);
    child.once('error', (err) => {
      if (pid !== undefined) running.delete(pid);
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code, signal) => {
      if (pid !== undefined) running.delete(pid);
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr });
    });
    // A program that exits without reading its input must not crash us with EPIPE.
    child.stdin.on('error', () => undefined);
    child.stdin.end(o.input ?? '');
  });
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // the group is gone already
  }
}

/** The first line of a failed program's complaint, for a one-line error. */
export function complaint(r: ProcResult): string {
  const text = (r.stderr.trim() || r.stdout.trim()).split('\n').filter(Boolean);
  return text[text.length - 1]?.slice(0, 300) ?? `exit status ${r.code}`;
}
