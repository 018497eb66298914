// Reading Slurm 22.05's JSON (OpenAPI v0.0.38 as printed by `squeue --json` and `sinfo --json`)
// and the job-input convention. Pure, so every odd field is tested without a cluster.

import { parseSize } from '../../lib/config/values.ts';
import type { NodeView, PendingJob, RunningJob } from '../model.ts';
import { parseArrayTasks, runnableTasks } from './job-array.ts';
import { MAX_NAME } from './sacct-parse.ts';
import type { HomeView, LimitedJob, Queue } from './types.ts';

/** Pending reasons that are not a lack of resources: such jobs would not run on a new drone. */
export const NOT_DEMAND = new Set([
  'Dependency',
  'DependencyNeverSatisfied',
  'BeginTime',
  'JobHeldUser',
  'JobHeldAdmin',
  'JobArrayTaskLimit',
  'AssocGrpJobsLimit',
  'QOSMaxJobsPerUserLimit',
]);

/**
 * Pending reasons saying an accounting limit holds the job back, or that it can never start:
 * a new drone adds cores, not allowance, so these jobs are not demand — a drone started for them
 * would sit idle, be released after idle-time and be started again for as long as they wait.
 * Slurm's job reason codes (squeue(1), "JOB REASON CODES"): the AssocGrp*, AssocMax*, QOSGrp*,
 * QOSMax* and Max*PerAccount families, and the single reasons below. They are listed in the
 * status with their reason, so an admin sees why they start nothing.
 */
const LIMIT_REASON = /^(?:(?:Assoc|QOS)(?:Grp|Max)\w*|Max\w*PerAccount)$/;
const NEVER_STARTS = new Set([
  'AccountingPolicy',
  'AccountNotAllowed',
  'InvalidAccount',
  'InvalidQOS',
  'PartitionTimeLimit',
  'QOSJobLimit',
  'QOSNotAllowed',
  'QOSResourceLimit',
  'QOSTimeLimit',
  'QOSUsageThreshold',
]);

/** A pending reason that is a limit a drone cannot raise (see LIMIT_REASON). */
export function isLimitReason(reason: string): boolean {
  return LIMIT_REASON.test(reason) || NEVER_STARTS.has(reason);
}

/** Slurm prints some numbers bare and, in later releases, as {set, infinite, number}. */
function num(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (v && typeof v === 'object' && 'number' in v && (v as { set?: boolean }).set !== false)
    return Number((v as { number: unknown }).number);
  return undefined;
}

/**
 * A job's --constraint as groups of alternatives: "cloud&site_x" → [[cloud],[site_x]],
 * "[a|b]&c" → [[a,b],[c]]. Counts ("a*2") are ignored: a drone has the feature or not.
 */
export function parseConstraint(text: string | undefined | null): string[][] {
  if (!text) return [];
  return text
    .replace(/[[\]()]/g, '')
    .split(/[&,]/)
    .map((group) => group.split('|').map((f) => f.replace(/\*\d+$/, '').trim()).filter(Boolean))
    .filter((g) => g.length > 0);
}

/**
 * Declared inputs: a token `estuary-inputs=URL[@SIZE],URL[@SIZE]...` anywhere in the job's
 * --comment (so `sbatch --comment` or `#SBATCH --comment=` works with plain sbatch).
 */
export function parseInputs(comment: string | undefined | null): PendingJob['inputs'] {
  const m = /(?:^|[\s;])estuary-inputs=(\S+)/.exec(comment ?? '');
  if (!m) return [];
  return m[1]!
    .split(',')
    .filter(Boolean)
    .map((item) => {
      const s = /^(.*)@(\d+(?:\.\d+)?[KMGT]?i?B?)$/i.exec(item);
      if (!s) return { url: item };
      try {
        return { url: s[1]!, bytes: parseSize(s[2]!) };
      } catch {
        return { url: item };
      }
    });
}

/**
 * Declared results: `estuary-outputs=SIZE` (or `URL@SIZE,...`, sizes summed) in the comment,
 * the bytes the job sends home; the policy charges them at the site's egress price.
 */
export function parseOutputs(comment: string | undefined | null): number | undefined {
  const m = /(?:^|[\s;])estuary-outputs=(\S+)/.exec(comment ?? '');
  if (!m) return undefined;
  let total = 0;
  for (const item of m[1]!.split(',').filter(Boolean)) {
    const size = /(?:^|@)(\d+(?:\.\d+)?[KMGT]?i?B?)$/i.exec(item)?.[1];
    try {
      if (size) total += parseSize(size);
    } catch {
      // a malformed size counts as none, like an undeclared one
    }
  }
  return total;
}

/** Slurm prints an unlimited or unset time limit as these (INFINITE and NO_VAL, 32 bit). */
const NO_LIMIT = 0xfffffffe;

/** The job's --time in ms, when it has a finite one (squeue prints minutes). */
export function timeLimitMs(v: unknown): number | undefined {
  if (v && typeof v === 'object' && (v as { infinite?: boolean }).infinite) return undefined;
  const minutes = num(v);
  return minutes === undefined || minutes <= 0 || minutes >= NO_LIMIT ? undefined : minutes * 60_000;
}

interface SqueueJob {
  job_id: number;
  job_state: string;
  state_reason?: string;
  user_name?: string;
  name?: string;
  partition?: string;
  cpus?: unknown;
  memory_per_node?: unknown;
  memory_per_cpu?: unknown;
  features?: string;
  comment?: string;
  time_limit?: unknown;
  submit_time?: unknown;
  start_time?: unknown;
  nodes?: string;
  array_job_id?: unknown;
  array_task_id?: unknown;
  array_task_string?: string;
  array_max_tasks?: unknown;
}

/** Running tasks per array job id: what a `%` throttle leaves room for. */
function runningTasksByArray(jobs: readonly SqueueJob[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const j of jobs) {
    const array = num(j.array_job_id);
    if (j.job_state === 'RUNNING' && array) out.set(array, (out.get(array) ?? 0) + 1);
  }
  return out;
}

/**
 * The pending jobs one squeue record stands for: one, or for a job array each task that could
 * start now (its id `<array>_<index>`, as scontrol takes it). A throttle (`%N`, or the record's
 * array_max_tasks) allows N running at once, less those already running.
 */
function expand(j: SqueueJob, job: PendingJob, running: ReadonlyMap<number, number>): PendingJob[] {
  const text = j.array_task_string;
  const tasks = text ? parseArrayTasks(text.includes('%') || !num(j.array_max_tasks) ? text : `${text}%${num(j.array_max_tasks)}`, MAX_TASKS_PER_ARRAY) : undefined;
  if (!tasks) return [job];
  const array = num(j.array_job_id) || j.job_id;
  const n = Math.min(runnableTasks(tasks, running.get(array) ?? 0), MAX_TASKS_PER_ARRAY);
  return tasks.indices.slice(0, n).map((i) => ({ ...job, id: `${array}_${i}` }));
}

/**
 * Tasks of one array counted as demand at most. A drone runs a handful of tasks at once and no
 * site's quota comes near ten thousand cores, so more would change no decision — only the cost
 * of planning each interval.
 */
const MAX_TASKS_PER_ARRAY = 10_000;

/**
 * Slurm 22.05 prints `squeue --json` and `sinfo --json` with exit status 0 when slurmctld cannot
 * be reached: an `errors` array and empty `jobs`/`nodes`. Read as it stands, that is "no jobs,
 * every drone's node gone", which would stop every drone: any error makes the whole read fail.
 */
export class SlurmReadError extends Error {}

/** The document, or a SlurmReadError with Slurm's own words when it cannot be trusted. */
export function slurmDocument(json: string, what: 'jobs' | 'nodes'): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch {
    throw new SlurmReadError(`unparsable output (${json.trim().slice(0, 80) || 'empty'})`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new SlurmReadError('output is not a JSON object');
  const d = doc as Record<string, unknown>;
  const errors = Array.isArray(d.errors) ? (d.errors as Record<string, unknown>[]) : [];
  if (errors.length > 0) {
    const e = errors[0] ?? {};
    const words = [e.description, e.error, e.source].filter((x) => typeof x === 'string' && x).join(': ');
    const errno = e.error_number ?? e.errno;
    throw new SlurmReadError(`${words || 'error'}${errno !== undefined ? ` (errno ${String(errno)})` : ''}`);
  }
  if (!Array.isArray(d[what])) throw new SlurmReadError(`no "${what}" list in the output`);
  return d;
}

export function parsePending(json: string, partitions: readonly string[]): PendingJob[] {
  return parseQueue(json, partitions, '\0').pending;
}

/** Pending jobs, and running ones counted by where they run (a drone's node name has `prefix`). */
export function parseQueue(json: string, partitions: readonly string[], prefix: string): Queue {
  const doc = slurmDocument(json, 'jobs') as { jobs?: SqueueJob[] };
  const out: PendingJob[] = [];
  const limited: LimitedJob[] = [];
  let truncatedArrays = 0;
  let runningAtHome = 0;
  let runningOnDrones = 0;
  const runningJobs: RunningJob[] = [];
  const running = runningTasksByArray(doc.jobs ?? []);
  for (const j of doc.jobs ?? []) {
    const parts = (j.partition ?? '').split(',');
    const partition = parts.find((p) => partitions.includes(p));
    if (!partition) continue;
    // A COMPLETING job still holds its node (epilog, output staging): without it the cloud's
    // running count dropped to 0 between short jobs while every drone was still busy.
    if (j.job_state === 'RUNNING' || j.job_state === 'COMPLETING') {
      if ((j.nodes ?? '').startsWith(prefix)) runningOnDrones++;
      else runningAtHome++;
      const r = runningJob(j, partition);
      if (r) runningJobs.push(r);
      continue;
    }
    if (j.job_state !== 'PENDING') continue;
    if (NOT_DEMAND.has(j.state_reason ?? '')) continue;
    if (isLimitReason(j.state_reason ?? '')) {
      limited.push({ id: String(j.job_id), reason: j.state_reason ?? '' });
      continue;
    }
    const cpus = num(j.cpus) ?? 1;
    const perNode = num(j.memory_per_node);
    const perCpu = num(j.memory_per_cpu);
    const outputBytes = parseOutputs(j.comment);
    const limit = timeLimitMs(j.time_limit);
    const job: PendingJob = {
      id: String(j.job_id),
      partition,
      cpus,
      memoryMb: perNode ?? (perCpu !== undefined ? perCpu * cpus : 0),
      constraints: parseConstraint(j.features),
      inputs: parseInputs(j.comment),
      ...(outputBytes !== undefined ? { outputBytes } : {}),
      ...(limit !== undefined ? { timeLimitMs: limit } : {}),
      ...(typeof j.user_name === 'string' && j.user_name ? { user: j.user_name } : {}),
      ...(typeof j.name === 'string' ? { name: j.name.slice(0, MAX_NAME) } : {}),
      submittedAt: (num(j.submit_time) ?? 0) * 1000,
      reason: j.state_reason ?? '',
    };
    if (j.array_task_string?.includes('...')) truncatedArrays++;
    out.push(...expand(j, job, running));
  }
  return { pending: out, runningAtHome, runningOnDrones, running: runningJobs, limited, truncatedArrays };
}

/**
 * A running job on one node, with its start time when squeue gives a plausible one (seconds
 * since the epoch, after 2000, before 2200: 0 or garbage is "unknown"; a start in the future or
 * older than the job could run is judged by the policy, which knows the time). A job on several
 * nodes (a hostlist) is not listed: its cores count as busy with no start time.
 */
function runningJob(j: SqueueJob, partition: string): RunningJob | undefined {
  const node = j.nodes ?? '';
  if (!/^[A-Za-z0-9_.-]+$/.test(node)) return undefined;
  const start = num(j.start_time);
  const limit = timeLimitMs(j.time_limit);
  return {
    node,
    cpus: num(j.cpus) ?? 1,
    partition,
    ...(typeof j.user_name === 'string' && j.user_name ? { user: j.user_name } : {}),
    ...(typeof j.name === 'string' ? { name: j.name.slice(0, MAX_NAME) } : {}),
    ...(limit !== undefined ? { timeLimitMs: limit } : {}),
    ...(start !== undefined && start > 946_684_800 && start < 7_258_118_400 ? { startedAt: start * 1000 } : {}),
    ...(j.job_state === 'COMPLETING' ? { completing: true } : {}),
  };
}

interface SinfoNode {
  name: string;
  state: string;
  state_flags?: string[];
  cpus?: unknown;
  alloc_cpus?: unknown;
  real_memory?: unknown;
  alloc_memory?: unknown;
}

export function nodeStatus(n: SinfoNode): NodeView['status'] {
  const flags = (n.state_flags ?? []).map((f) => f.toUpperCase());
  const state = n.state.toLowerCase();
  if (state === 'down' || state === 'error' || state === 'fail') return 'down';
  if (state === 'future') return 'absent';
  if (flags.includes('DRAIN')) return (num(n.alloc_cpus) ?? 0) > 0 ? 'draining' : 'drained';
  if (state === 'unknown') return 'absent';
  return 'available';
}

/**
 * Features every home node (not a drone, not a FUTURE placeholder) of the served partitions
 * carries, sorted: steering may then say `site_x|<one of them>` and a steered job can still run
 * at home, so home cores never sit idle while it waits for a drone.
 */
export function homeFeatures(json: string, prefix: string, partitions: readonly string[]): string[] {
  const doc = slurmDocument(json, 'nodes') as { nodes?: (SinfoNode & { features?: string; partitions?: string[] })[] };
  const featuresOf = (n: { features?: string }) => (n.features ?? '').split(',').map((f) => f.trim()).filter(Boolean);
  // A node carrying a site_<name> feature is a drone: this coordinator's, or another one's
  // bursting the same partition under its own prefix. Neither is a home node.
  const home = (doc.nodes ?? []).filter(
    (n) =>
      !n.name.startsWith(prefix) &&
      n.state.toLowerCase() !== 'future' &&
      !featuresOf(n).some((f) => f.startsWith('site_')) &&
      (!n.partitions || n.partitions.some((p) => partitions.includes(p))),
  );
  if (home.length === 0) return [];
  const sets = home.map((n) => new Set(featuresOf(n)));
  return [...sets[0]!].filter((f) => sets.every((s) => s.has(f))).sort();
}

/**
 * The home cluster's cores as the policy weighs them: the site's own nodes (not a drone, not a
 * FUTURE placeholder) of the served partitions that take jobs now; a drained, draining or down
 * node frees no core for the waiting work, so it counts for nothing. Undefined when none.
 */
export function homeView(json: string, prefix: string, partitions: readonly string[]): HomeView | undefined {
  const doc = slurmDocument(json, 'nodes') as { nodes?: (SinfoNode & { partitions?: string[] })[] };
  let cores = 0;
  let idleCores = 0;
  let nodeCores = 0;
  let nodeMemoryMb = 0;
  for (const n of doc.nodes ?? []) {
    if (n.name.startsWith(prefix) || (n.partitions && !n.partitions.some((p) => partitions.includes(p)))) continue;
    if (nodeStatus(n) !== 'available') continue;
    const cpus = Math.max(0, num(n.cpus) ?? 0);
    cores += cpus;
    idleCores += Math.max(0, cpus - (num(n.alloc_cpus) ?? 0));
    nodeCores = Math.max(nodeCores, cpus);
    nodeMemoryMb = Math.max(nodeMemoryMb, num(n.real_memory) ?? 0);
  }
  return cores > 0 ? { cores, idleCores, nodeCores, nodeMemoryMb } : undefined;
}

/** Every feature some node carries, FUTURE nodes included (slurmctld accepts a job asking any). */
export function nodeFeatures(json: string): Set<string> {
  const doc = slurmDocument(json, 'nodes') as { nodes?: { features?: string }[] };
  return new Set((doc.nodes ?? []).flatMap((n) => (n.features ?? '').split(',').map((f) => f.trim()).filter(Boolean)));
}

export function parseNodes(json: string, prefix: string): Map<string, NodeView> {
  const doc = slurmDocument(json, 'nodes') as { nodes?: SinfoNode[] };
  const out = new Map<string, NodeView>();
  for (const n of doc.nodes ?? []) {
    if (!n.name.startsWith(prefix)) continue;
    out.set(n.name, {
      status: nodeStatus(n),
      cpus: num(n.cpus) ?? 0,
      allocCpus: num(n.alloc_cpus) ?? 0,
      memoryMb: num(n.real_memory) ?? 0,
      allocMemoryMb: num(n.alloc_memory) ?? 0,
    });
  }
  return out;
}
