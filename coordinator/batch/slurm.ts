// The Slurm adapter: demand from `squeue --json`, nodes from `sinfo --json`, and the drones'
// dynamic nodes (slurmd -Z) moved with scontrol. The facts it relies on (Slurm 22.05) are in
// docs/COORDINATOR.md, "Slurm"; each odd step below says which one it answers.

import { randomBytes } from 'node:crypto';
import type { BatchSystemConfig } from '../config.ts';
import { coordinatorErrors } from '../errors.ts';
import type { NodeView } from '../model.ts';
import { complaint, MAX_JSON_BYTES, runProgram } from '../proc.ts';
import { parseSacct, SACCT_FORMAT } from './sacct-parse.ts';
import { homeFeatures, homeView, nodeFeatures, parseNodes, parseQueue, SlurmReadError } from './slurm-parse.ts';
import type { BatchSystem, FinishedRead, HomeView, Queue } from './types.ts';

type SlurmConfig = Extract<BatchSystemConfig, { type: 'slurm' }>;

export class SlurmBatch implements BatchSystem {
  readonly kind = 'slurm';
  private readonly c: SlurmConfig;
  private home: readonly string[] = [];
  private homeView: HomeView | undefined;
  /** sacct said accounting storage is disabled: only the completion log is asked from then on. */
  private completionOnly = false;

  constructor(config: SlurmConfig) {
    this.c = config;
  }

  /** `json`: the output is JSON read whole (squeue, sinfo), so it is kept up to MAX_JSON_BYTES. */
  private async run(program: string, args: readonly string[], json = false): Promise<string> {
    const file = this.c.binDir ? `${this.c.binDir}/${program}` : program;
    // SLURM_BITSTR_LEN=0: squeue (22.05, --json included) otherwise cuts a long array task list
    // after 64 characters with "...", and an array of listed indices would count as a few tasks.
    const env = { ...process.env, SLURM_BITSTR_LEN: '0', ...(this.c.slurmConf ? { SLURM_CONF: this.c.slurmConf } : {}) };
    let r;
    try {
      r = await runProgram(file, args, { env, timeoutMs: this.c.timeout, ...(json ? { maxOutputBytes: MAX_JSON_BYTES } : {}) });
    } catch (err) {
      throw coordinatorErrors.batchFailed(`${program} ${args[0] ?? ''}`, (err as Error).message);
    }
    if (r.code !== 0) {
      const e = coordinatorErrors.batchFailed(`${program} ${args.join(' ')}`, complaint(r));
      (e as { slurmOutput?: string }).slurmOutput = r.stderr + r.stdout;
      throw e;
    }
    return r.stdout;
  }

  async queue(prefix: string): Promise<Queue> {
    // squeue --json ignores -t and -p in 22.05, so filtering happens in parseQueue.
    return readable('squeue --json', () => this.run('squeue', ['--json'], true), (t) => parseQueue(t, this.c.partitions, prefix));
  }

  async nodes(prefix: string): Promise<Map<string, NodeView>> {
    return readable('sinfo --json', () => this.run('sinfo', ['--json'], true), (t) => {
      const nodes = parseNodes(t, prefix);
      this.home = homeFeatures(t, prefix, this.c.partitions);
      this.homeView = homeView(t, prefix, this.c.partitions);
      this.declared = nodeFeatures(t);
      return nodes;
    });
  }

  /** The home nodes' cores, as the last nodes() read found them. */
  homeCores(): HomeView | undefined {
    return this.homeView;
  }

  /**
   * Finished jobs from `sacct --parsable2`: Slurm's database when it has one (slurmdbd), else the
   * job completion log (`sacct -c`, JobCompType=jobcomp/filetxt), whichever `history` allows;
   * neither (accounting_storage/none and jobcomp/none) is an error that says so. `--json` is not
   * used: in 22.05 it answers only from slurmdbd (it goes through the REST plugins), never from
   * the completion log. The completion log is not filtered by time (sacct -c reads it whole).
   */
  async finished(sinceMs: number): Promise<FinishedRead> {
    const mode = this.c.history;
    const since = localTime(sinceMs);
    // A delimiter no job name written before this read can hold (sacct-parse.ts).
    const delimiter = `|${randomBytes(12).toString('hex')}|`;
    const common = ['--allusers', '--allocations', '--parsable2', '--noheader', `--delimiter=${delimiter}`, `--format=${SACCT_FORMAT}`];
    const partitions = `--partition=${this.c.partitions.join(',')}`;
    if (mode !== 'completion' && !this.completionOnly) {
      try {
        const text = await this.run('sacct', [...common, partitions, `--starttime=${since}`, '--endtime=now'], true);
        return { ...parseSacct(text, this.c.partitions, delimiter), source: 'Slurm accounting (sacct)' };
      } catch (err) {
        if (mode === 'accounting' || !/accounting storage is disabled/i.test(said(err))) throw err;
        this.completionOnly = true;
      }
    }
    try {
      // Not filtered by partition: a record cut by a newline in its name has none, and must be
      // seen to distrust what follows it (sacct-parse.ts); the parser keeps the served ones.
      const text = await this.run('sacct', ['--completion', ...common], true);
      return { ...parseSacct(text, this.c.partitions, delimiter), source: 'Slurm job completion log (sacct -c)' };
    } catch (err) {
      if (/job completion is disabled/i.test(said(err)))
        throw coordinatorErrors.batchFailed('sacct', `Slurm keeps no job history: accounting storage is disabled and job completion is disabled (set AccountingStorageType=accounting_storage/slurmdbd, or JobCompType=jobcomp/filetxt with JobCompLoc)`);
      throw err;
    }
  }

  /** Features every home node carries, as the last nodes() read found them. */
  private declared = new Set<string>();

  homeFeatures(): readonly string[] {
    return this.home;
  }

  declares(feature: string): boolean {
    return this.declared.has(feature);
  }

  /**
   * Slurm 22.05 does not run the scheduler when a dynamic node registers (jobs wait for the next
   * backfill pass, 16–27 s by default); any update of the node does. Setting its comment to the
   * drone's tag is that update, and it names the drone in `scontrol show node`.
   */
  async integrate(node: string, tag: string): Promise<void> {
    await this.run('scontrol', ['update', `nodename=${node}`, `comment=${tag}`]);
  }

  /**
   * `scontrol update jobid=1,2,3 features=X` (an operator may change a pending job's features;
   * an empty value clears them). scontrol takes a list of job ids, so a whole placement is a few
   * calls, not one per job. A job that started or ended meanwhile makes scontrol complain about
   * that job only; the others are updated, and the complaint is not an error here.
   */
  async steer(jobIds: readonly string[], features: string): Promise<void> {
    for (let i = 0; i < jobIds.length; i += STEER_BATCH) {
      const ids = jobIds.slice(i, i + STEER_BATCH);
      try {
        await this.run('scontrol', ['update', `jobid=${ids.join(',')}`, `features=${features}`]);
      } catch (err) {
        if (!jobGone(err)) throw err;
      }
    }
  }

  async drain(node: string, reason: string): Promise<void> {
    try {
      await this.run('scontrol', ['update', `nodename=${node}`, 'state=drain', `reason=${reason}`]);
    } catch (err) {
      if (!notFound(err)) throw err;
    }
  }

  /**
   * A lost node is set DOWN before the delete: Slurm then requeues its jobs within a second
   * instead of after the ~45 s it takes to notice. A busy node refuses the delete; the caller
   * tries again next interval.
   */
  async remove(node: string, lost: boolean): Promise<void> {
    try {
      if (lost) await this.run('scontrol', ['update', `nodename=${node}`, 'state=down', 'reason=estuary: drone lost']);
      await this.run('scontrol', ['delete', `nodename=${node}`]);
    } catch (err) {
      if (!notFound(err)) throw err;
    }
  }
}

/** Runs a read; output Slurm itself flags as wrong (errors array, not JSON) is a failed read. */
async function readable<T>(op: string, run: () => Promise<string>, parse: (text: string) => T): Promise<T> {
  const text = await run();
  try {
    return parse(text);
  } catch (err) {
    if (err instanceof SlurmReadError || err instanceof SyntaxError) throw coordinatorErrors.batchFailed(op, err.message);
    throw err;
  }
}

/** Job ids per scontrol call: well inside any command-line limit. */
const STEER_BATCH = 500;

/** sacct reads `--starttime=YYYY-MM-DDTHH:MM:SS` in the local time zone, as the coordinator's. */
export function localTime(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}T${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/** The error's message with the program's own output. */
const said = (err: unknown): string => `${(err as Error).message} ${(err as { slurmOutput?: string }).slurmOutput ?? ''}`;

function jobGone(err: unknown): boolean {
  const text = `${(err as Error).message} ${(err as { slurmOutput?: string }).slurmOutput ?? ''}`;
  return /no longer pending|Invalid job id|already (completed|finished)/i.test(text);
}

function notFound(err: unknown): boolean {
  const text = `${(err as Error).message} ${(err as { slurmOutput?: string }).slurmOutput ?? ''}`;
  return /Invalid node name|Unable to find node|not found/i.test(text);
}
