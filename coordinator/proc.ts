// Runs an external program (squeue, scontrol, ip, an admin's script) with a deadline, and hands
// back its exit status and output. Never through a shell unless the caller asks for one.
//
// A program is a faulty peer: its output is bounded here, never by the program. A site script's
// output is only ever shown as its last line or parsed for a few KEY=value lines, so the first
// and last 64 KiB of each stream are kept. squeue and sinfo print JSON that must be read whole:
// their callers raise `maxOutputBytes` (to MAX_JSON_BYTES) and a program printing more is killed
// and the call fails with "output too large". What the caller asks for is what holds: the
// runaway cap is for streams kept as their two ends, never above a caller's own figure.

import { spawn } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';

export interface ProcResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface ProcOptions {
  readonly timeoutMs?: number;
  readonly env?: NodeJS.ProcessEnv;
  readonly input?: string;
  /**
   * Set: stdout is kept whole up to this many bytes, and a program printing more is killed and
   * the call rejected ("output too large"). Unset: the first and last 64 KiB of it are kept.
   */
  readonly maxOutputBytes?: number;
}

/** Bytes kept at each end of a stream whose middle is dropped. */
export const KEPT_EDGE_BYTES = 64 * 1024;

/**
 * The largest squeue/sinfo/sacct answer read whole. Slurm 22.05's `squeue --json` prints about
 * 3.1 KB a job and lists every partition's jobs, so this holds a queue of about 160 000 jobs. It
 * stays under V8's longest string (2^29 - 24 characters, 512 MiB): the text is one string.
 */
export const MAX_JSON_BYTES = 500 * 1024 * 1024;

/**
 * Beyond this much output in all (stderr alone, when the caller keeps stdout whole), a program is
 * treated as runaway (killed, call failed).
 */
const RUNAWAY_BYTES = 64 * 1024 * 1024;

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

/** One stream's output: whole up to a cap, or its two ends with the middle dropped. */
class Kept {
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  total = 0;
  private readonly whole: number | undefined;
  private readonly decoder = new StringDecoder('utf8');
  private readonly decoded: string[] = [];

  constructor(whole: number | undefined) {
    this.whole = whole;
  }

  add(c: Buffer): void {
    this.total += c.length;
    if (this.whole !== undefined) {
      // Decoded as it comes: one copy and decode of hundreds of MiB at the end would hold the
      // event loop for a few hundred ms.
      const part = c.subarray(0, Math.max(0, this.whole - this.headBytes));
      this.headBytes += part.length;
      if (part.length) this.decoded.push(this.decoder.write(part));
      return;
    }
    const headRoom = (this.whole ?? KEPT_EDGE_BYTES) - this.headBytes;
    if (headRoom > 0) {
      const part = c.subarray(0, headRoom);
      this.head.push(part);
      this.headBytes += part.length;
      c = c.subarray(part.length);
    }
    if (c.length === 0 || this.whole !== undefined) return;
    this.tail.push(c);
    this.tailBytes += c.length;
    while (this.tail.length > 1 && this.tailBytes - this.tail[0]!.length >= KEPT_EDGE_BYTES) this.tailBytes -= this.tail.shift()!.length;
  }

  text(): string {
    if (this.whole !== undefined) return this.decoded.join('') + this.decoder.end();
    const dropped = this.total - this.headBytes - this.tailBytes;
    const tail = Buffer.concat(this.tail);
    const end = tail.subarray(Math.max(0, tail.length - KEPT_EDGE_BYTES));
    const gap = dropped + tail.length - end.length;
    return Buffer.concat(this.head).toString() + (gap > 0 ? `\n[… ${gap} bytes left out …]\n` : '') + end.toString();
  }
}

/** Whether `err` says a program gave no answer within its timeout (runProgram's, carried by callers). */
export const timedOut = (err: unknown): boolean => (err as { timedOut?: boolean } | undefined)?.timedOut === true;

/** Whether `err` says a program's output was more than the caller reads (its `maxOutputBytes`). */
export const tooLarge = (err: unknown): boolean => (err as { tooLarge?: boolean } | undefined)?.tooLarge === true;

export function runProgram(file: string, args: readonly string[], o: ProcOptions = {}): Promise<ProcResult> {
  return new Promise((resolve, reject) => {
    // Its own process group, so a timeout ends everything it started (an admin's script runs
    // `/bin/sh -c`, whose children would otherwise outlive the kill and pile up under PID 1).
    const child = spawn(file, args, { env: o.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    const pid = child.pid;
    if (pid !== undefined) running.add(pid);
    const stdout = new Kept(o.maxOutputBytes);
    const stderr = new Kept(undefined);
    let settled = false;
    const fail = (err: Error): void => {
      if (settled) return;
      settled = true;
      if (pid !== undefined) running.delete(pid);
      clearTimeout(timer);
      killGroup(pid);
      reject(err);
    };
    const watch = (): void => {
      const limit = o.maxOutputBytes;
      if (limit !== undefined && stdout.total > limit) fail(Object.assign(new Error(`${file} ${args.join(' ')}: output too large (over ${limit} bytes)`), { tooLarge: true }));
      else if ((limit === undefined ? stdout.total : 0) + stderr.total > RUNAWAY_BYTES) fail(new Error(`${file} ${args.join(' ')}: output too large (over ${RUNAWAY_BYTES} bytes)`));
    };
    child.stdout.on('data', (c: Buffer) => (stdout.add(c), watch()));
    child.stderr.on('data', (c: Buffer) => (stderr.add(c), watch()));
    const timer = setTimeout(() => {
      const text = stderr.text();
      const said = complaint({ code: 0, stdout: '', stderr: text });
      fail(Object.assign(new Error(`${file} ${args.join(' ')}: no answer in ${o.timeoutMs} ms${text.trim() ? ` (it said: ${said})` : ''}`), { timedOut: true }));
    }, o.timeoutMs ?? 30_000);
    child.once('error', fail);
    child.once('close', (code, signal) => {
      if (settled) return;
      settled = true;
      if (pid !== undefined) running.delete(pid);
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), stdout: stdout.text(), stderr: stderr.text() });
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
