// The Slurm adapter: demand from `squeue --json`, nodes from `sinfo --json`, and the drones'
// dynamic nodes (slurmd -Z) moved with scontrol. The facts it relies on (Slurm 22.05) are in
// docs/COORDINATOR.md, "Slurm"; each odd step below says which one it answers.

import { randomBytes } from 'node:crypto';
import type { BatchSystemConfig } from '../config.ts';
import { coordinatorErrors } from '../errors.ts';
import type { NodeView } from '../model.ts';
import { complaint, MAX_JSON_BYTES, runProgram, timedOut, tooLarge } from '../proc.ts';
import { CompletionLogFile, LogNotAFile, LogTooLarge } from './jobcomp-file.ts';
import { parseSacctSliced, SACCT_FORMAT } from './sacct-parse.ts';
import { DEFAULT_JOBCOMP_LOC, DEFAULT_SLURM_CONF, readSlurmConf } from './slurm-conf.ts';
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
  /** The completion log, followed from where the last read stopped (jobcomp-file.ts). */
  private readonly log: CompletionLogFile;

  constructor(config: SlurmConfig) {
    this.c = config;
    this.log = new CompletionLogFile(config.partitions, MAX_JSON_BYTES);
  }

  /**
   * `whole`: the output is read whole (JSON, sacct's records), so it is kept up to MAX_JSON_BYTES.
   * `op`: how a failure names the call; the command line by default. A call whose arguments change
   * every time (sacct's delimiter and start time) names itself, so its error reads the same each
   * time it fails and holds the program's own words, not its arguments.
   */
  private async run(program: string, args: readonly string[], o: { whole?: boolean; op?: string } = {}): Promise<string> {
    const file = this.c.binDir ? `${this.c.binDir}/${program}` : program;
    // SLURM_BITSTR_LEN=0: squeue (22.05, --json included) otherwise cuts a long array task list
    // after 64 characters with "...", and an array of listed indices would count as a few tasks.
    const env = { ...process.env, SLURM_BITSTR_LEN: '0', ...(this.c.slurmConf ? { SLURM_CONF: this.c.slurmConf } : {}) };
    let r;
    try {
      r = await runProgram(file, args, { env, timeoutMs: this.c.timeout, ...(o.whole ? { maxOutputBytes: MAX_JSON_BYTES } : {}) });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT')
        throw coordinatorErrors.batchProgramMissing(program, this.c.binDir ? `no ${file}` : `not on PATH ${process.env.PATH ?? ''}`);
      const message = (err as Error).message;
      const commandLine = `${file} ${args.join(' ')}: `;
      const e = coordinatorErrors.batchFailed(o.op ?? `${program} ${args[0] ?? ''}`, message.startsWith(commandLine) ? `${program}: ${message.slice(commandLine.length)}` : message);
      if (timedOut(err)) throw Object.assign(e, { timedOut: true });
      throw tooLarge(err) ? Object.assign(e, { tooLarge: true }) : e;
    }
    if (r.code !== 0) {
      const e = coordinatorErrors.batchFailed(o.op ?? `${program} ${args.join(' ')}`, complaint(r));
      (e as { slurmOutput?: string }).slurmOutput = r.stderr + r.stdout;
      throw e;
    }
    return r.stdout;
  }

  async queue(prefix: string): Promise<Queue> {
    // squeue --json ignores -t and -p in 22.05, so filtering happens in parseQueue.
    return readable('squeue --json', () => this.run('squeue', ['--json'], { whole: true }), (t) => parseQueue(t, this.c.partitions, prefix));
  }

  async nodes(prefix: string): Promise<Map<string, NodeView>> {
    return readable('sinfo --json', () => this.run('sinfo', ['--json'], { whole: true }), (t) => {
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

  /** Slurm's clock: sacct's `--starttime` is read in it (the wall clock, as slurmdbd's). */
  accountingTime(): number {
    return Date.now();
  }

  /**
   * Finished jobs: Slurm's database when it has one (`sacct --parsable2`, slurmdbd), else the job
   * completion log (JobCompType=jobcomp/filetxt), whichever `history` allows; neither is an
   * error that says so. `--json` is not used: in 22.05 it answers only from slurmdbd (through
   * the REST plugins). The completion log is read as a file, not with `sacct -c`, whose reading
   * a job name can forge (jobcomp-parse.ts); it is not filtered by time, but read from where
   * the last read stopped (jobcomp-file.ts), so each read returns the jobs written since.
   */
  async finished(sinceMs: number, untilMs?: number): Promise<FinishedRead> {
    const mode = this.c.history;
    if (mode !== 'completion' && !this.completionOnly) {
      try {
        return await this.accounting(sinceMs, untilMs);
      } catch (err) {
        if (mode === 'accounting' || !/accounting storage is disabled/i.test(said(err))) throw err;
        this.completionOnly = true;
      }
    }
    return this.completionLog(mode === 'completion');
  }

  private async accounting(sinceMs: number, untilMs: number | undefined): Promise<FinishedRead> {
    // A delimiter no job name written before this read can hold (sacct-parse.ts).
    const delimiter = `|${randomBytes(12).toString('hex')}|`;
    const args = ['--allusers', '--allocations', '--parsable2', '--noheader', `--delimiter=${delimiter}`, `--format=${SACCT_FORMAT}`];
    args.push(`--partition=${this.c.partitions.join(',')}`, `--starttime=${localTime(sinceMs)}`, `--endtime=${untilMs === undefined ? 'now' : localTime(untilMs)}`);
    const text = await this.run('sacct', args, { whole: true, op: 'sacct' });
    // sacct writes every record with the delimiter asked for: an answer where no line holds it is
    // not records (a wrapper or a sacct that ignores --delimiter), not a week without jobs.
    if (/\S/.test(text) && !text.includes(delimiter))
      throw coordinatorErrors.batchFailed('sacct', 'no line of its answer is split by the --delimiter asked for: it is not Slurm\'s sacct --parsable2 (check `batch-system.bin-dir` and PATH)');
    return { ...(await parseSacctSliced(text, this.c.partitions, delimiter)), source: 'Slurm accounting (sacct)' };
  }

  /** `asked`: `history: completion` (else the database said it is disabled). */
  private async completionLog(asked: boolean): Promise<FinishedRead> {
    const confFile = this.c.slurmConf ?? process.env.SLURM_CONF ?? DEFAULT_SLURM_CONF;
    const conf = await readSlurmConf(confFile).catch((err: Error) => {
      throw coordinatorErrors.completionLog(`cannot read ${confFile} to find the job completion log (${err.message})`, 'set `batch-system.slurm-conf` to the cluster\'s slurm.conf, or learn from slurmdbd with `history: accounting`');
    });
    const type = conf.get('jobcomptype') ?? 'jobcomp/none';
    if (type !== 'jobcomp/filetxt') {
      const what = type === 'jobcomp/none' ? 'job completion is disabled' : `job completion is not written to a file (JobCompType=${type})`;
      if (!asked)
        throw coordinatorErrors.noHistory(`Slurm keeps no job history: accounting storage is disabled and ${what} (set AccountingStorageType=accounting_storage/slurmdbd, or JobCompType=jobcomp/filetxt with JobCompLoc, in ${confFile})`);
      throw coordinatorErrors.noHistory(`${what} (${confFile}), and \`history: completion\` reads only the completion log: set \`history: auto\` to learn from slurmdbd, or JobCompType=jobcomp/filetxt with JobCompLoc`);
    }
    const log = conf.get('jobcomploc') || DEFAULT_JOBCOMP_LOC;
    const where = `the job completion log ${log} (JobCompLoc in ${confFile})`;
    const read = await this.log.read(log).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT')
        throw coordinatorErrors.completionLog(`${where} is not on this host: slurmctld writes it on its own host`, 'run the coordinator there or share the file at that path, or learn from slurmdbd with `history: accounting`');
      if (err instanceof LogNotAFile)
        throw coordinatorErrors.completionLog(`${where} is not a regular file`, 'set JobCompLoc to the file slurmctld writes finished jobs to (JobCompType=jobcomp/filetxt), e.g. /var/log/slurm/jobcomp.log')
      if (err instanceof LogTooLarge)
        throw coordinatorErrors.completionLog(`${where} is ${err.size} bytes, more than the ${MAX_JSON_BYTES} read`, 'rotate it (logrotate), or learn from slurmdbd with `history: accounting`');
      throw coordinatorErrors.completionLog(`cannot read ${where}: ${err.message}`, 'let the coordinator\'s user read it');
    });
    return { jobs: read.jobs, takenBack: read.takenBack, skipped: read.skipped, source: `Slurm job completion log (${log})` };
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
