// Workload traces for the simulator. Two formats (docs/BENCHMARKING.md, "Trace formats"):
//  - SWF, the Parallel Workloads Archive's Standard Workload Format: one job a line, 18
//    whitespace-separated numbers, -1 for unknown, `;` lines are the header. We read submit time
//    (field 2), run time (4), allocated processors (5, else requested: 8), used memory per
//    processor in KB (7, else requested: 10), requested time (9, the job's time limit), user id
//    (12) and executable number (14): the user and job name run times are learned by.
//    Jobs that never ran (run time or processors <= 0: cancelled before start) are skipped and
//    counted, as the archive's own cleaning advice does.
//  - JSON jobs: what SWF cannot say, the data: each job's inputs and outputs with their sizes.
// Pure: text in, jobs out; a bad line is one error naming the file, the line and the field.

import { z } from 'zod';
import { coordinatorErrors } from '../errors.ts';

export interface TraceJob {
  readonly id: string;
  /** Milliseconds after the trace's start. */
  readonly submit: number;
  readonly runtime: number;
  readonly cpus: number;
  readonly memoryMb: number;
  readonly timeLimitMs?: number;
  readonly inputs: readonly { readonly url: string; readonly bytes: number }[];
  /** Results sent to the home storage location when the job ends. */
  readonly outputBytes: number;
  /** Who submitted it and its name: what run times are learned by (coordinator/run-times.ts). */
  readonly user: string;
  readonly name: string;
}

/** A trace that names no user or job is one user's work of one kind. */
const DEFAULT_USER = 'user';
const DEFAULT_NAME = 'job';

export interface Trace {
  readonly jobs: TraceJob[];
  /** Lines or jobs left out, with why (cancelled before start). */
  readonly skipped: number;
}

const SWF_FIELDS = 18;
/**
 * The simulator's clock counts milliseconds exactly up to 2^53 (about 285 000 years): a time in
 * seconds beyond this would arrive never, or end never, once in milliseconds.
 */
const MAX_SECONDS = Math.floor(Number.MAX_SAFE_INTEGER / 1000);
/** A job with no memory stated gets this: a typical batch slot of 2 GB per core. */
const DEFAULT_MB_PER_CPU = 2000;

export function parseSwf(text: string, file = 'trace.swf'): Trace {
  const jobs: TraceJob[] = [];
  let skipped = 0;
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!.trim();
    if (line === '' || line.startsWith(';')) continue;
    const parts = line.split(/\s+/);
    const where = `line ${n + 1}`;
    if (parts.length !== SWF_FIELDS)
      throw coordinatorErrors.badTrace(file, where, `expected ${SWF_FIELDS} fields (SWF), found ${parts.length}`);
    const f = parts.map((p, i) => {
      const v = Number(p);
      if (!Number.isFinite(v)) throw coordinatorErrors.badTrace(file, where, `field ${i + 1} is "${p}", not a number`);
      return v;
    });
    const field = (i: number) => f[i - 1]!;
    if (field(2) < 0) throw coordinatorErrors.badTrace(file, where, 'field 2 (submit time) is negative');
    for (const [i, what] of [[2, 'submit time'], [4, 'run time'], [9, 'requested time']] as const)
      if (field(i) > MAX_SECONDS) throw coordinatorErrors.badTrace(file, where, `field ${i} (${what}) is ${field(i)} s, more than the clock counts (${MAX_SECONDS} s)`);
    const procs = field(5) > 0 ? field(5) : field(8);
    if (field(4) <= 0 || procs <= 0) {
      skipped++;
      continue;
    }
    const kbPerProc = field(7) > 0 ? field(7) : field(10);
    jobs.push({
      id: String(field(1)),
      submit: field(2) * 1000,
      runtime: field(4) * 1000,
      cpus: procs,
      memoryMb: kbPerProc > 0 ? Math.ceil((kbPerProc * procs) / 1024) : DEFAULT_MB_PER_CPU * procs,
      ...(field(9) > 0 ? { timeLimitMs: field(9) * 1000 } : {}),
      inputs: [],
      outputBytes: 0,
      user: field(12) >= 0 ? `u${field(12)}` : DEFAULT_USER,
      name: field(14) >= 0 ? `app${field(14)}` : DEFAULT_NAME,
    });
  }
  return { jobs: jobs.sort((a, b) => a.submit - b.submit), skipped };
}

const file = z.strictObject({ url: z.string().min(1), bytes: z.number().int().nonnegative() });
const jsonJob = z.strictObject({
  id: z.union([z.string().min(1), z.number()]).optional(),
  /** Seconds after the trace's start. */
  submit: z.number().nonnegative().max(MAX_SECONDS),
  /** Seconds of computing, without reading inputs or sending outputs. */
  runtime: z.number().positive().max(MAX_SECONDS),
  cpus: z.number().int().positive().default(1),
  memoryMb: z.number().positive().optional(),
  /** Seconds: the job's time limit, as Slurm's --time. */
  timeLimit: z.number().positive().max(MAX_SECONDS).optional(),
  inputs: z.array(file).default([]),
  outputs: z.array(z.strictObject({ url: z.string().min(1).optional(), bytes: z.number().int().nonnegative() })).default([]),
  /** Who submitted it and the job's name (Slurm's --job-name). */
  user: z.string().min(1).default(DEFAULT_USER),
  name: z.string().min(1).default(DEFAULT_NAME),
});

export function parseJsonJobs(text: string, name = 'jobs.json'): Trace {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw coordinatorErrors.badTrace(name, 'JSON', (err as Error).message);
  }
  const list = Array.isArray(raw) ? raw : (raw as { jobs?: unknown } | null)?.jobs;
  if (!Array.isArray(list)) throw coordinatorErrors.badTrace(name, 'top level', 'expected an array of jobs or {"jobs": [...]}');
  const jobs = list.map((j: unknown, i): TraceJob => {
    const r = jsonJob.safeParse(j);
    if (!r.success) {
      const issue = r.error.issues[0]!;
      throw coordinatorErrors.badTrace(name, `job ${i}${issue.path.length ? `.${issue.path.join('.')}` : ''}`, issue.message);
    }
    const v = r.data;
    return {
      id: v.id === undefined ? String(i + 1) : String(v.id),
      submit: v.submit * 1000,
      runtime: v.runtime * 1000,
      cpus: v.cpus,
      memoryMb: v.memoryMb ?? DEFAULT_MB_PER_CPU * v.cpus,
      ...(v.timeLimit ? { timeLimitMs: v.timeLimit * 1000 } : {}),
      inputs: v.inputs,
      outputBytes: v.outputs.reduce((s, o) => s + o.bytes, 0),
      user: v.user,
      name: v.name,
    };
  });
  return { jobs: jobs.sort((a, b) => a.submit - b.submit), skipped: 0 };
}

/** By file name: .swf is SWF, anything else JSON jobs. */
export function parseTrace(text: string, name: string): Trace {
  return name.endsWith('.swf') ? parseSwf(text, name) : parseJsonJobs(text, name);
}
