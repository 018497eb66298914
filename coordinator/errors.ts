// Errors a user of `estuary coordinator` can cause or meet, with stable codes listed in
// docs/ERRORS.md. Config errors exit 2 (usage); failures of a site or the batch system are logged
// with their code and retried, they never end the coordinator.

import { type CodeDoc, codeTable, EstuaryError, type ErrorsSection } from '../lib/errors.ts';
import { escapeControls } from '../lib/terminal-text.ts';

/** Each code's row in docs/ERRORS.md, in the order listed there. */
export const COORDINATOR_CODES = {
  ESTUARY_CO_CONFIG: {
    meaning: 'a value in the coordinator\'s configuration is wrong or missing, an unknown key (`quta`: named, with "did you mean"), a reference to something undefined (a machine type a site names), or a `batch-system.slurm-conf` that cannot be read (with squeue\'s own words)',
    fix: 'correct the key the message names; docs/COORDINATOR.md lists every key',
  },
  ESTUARY_CO_LISTEN: {
    meaning: 'the `--listen` address (`listen:` in the config) of the status API and page is taken or not allowed; the coordinator exits 2 before it touches a site',
    fix: 'choose another address or port, or stop what holds it',
  },
  ESTUARY_CO_NO_SITES: {
    meaning: 'the configuration has no `sites:`',
    fix: 'describe at least one site',
  },
  ESTUARY_CO_STATE_DIR: {
    meaning: 'the `--state-dir` cannot be created or its registry cannot be opened',
    fix: 'give a writable directory; never point two coordinators at one',
  },
  ESTUARY_CO_REGISTRY_LOCKED: {
    meaning: "another running coordinator (any PID namespace) holds the drone registry's kernel lock",
    fix: 'run one coordinator per registry; the lock ends with its holder, so a crashed one leaves none',
  },
  ESTUARY_CO_REGISTRY_VERSION: {
    meaning: 'the registry was written by an estuary with another format',
    fix: 'run the release that wrote it, or drain its drones and start with a new state dir',
  },
  ESTUARY_CO_SITE_REMOVED: {
    meaning: 'the registry holds live drones at a site (or of a machine type) the config no longer has: they could be neither watched nor stopped',
    fix: 'put the site back with `quota: 0` so its drones drain, and remove it once they are down',
  },
  ESTUARY_CO_SITE: {
    meaning: 'a site adapter call failed (a command exited non-zero, a namespace could not be made) or got no answer (`… got no answer`: a timeout, a lost connection — the site may have done it); that operation is backed off at that site, growing until it succeeds',
    fix: 'see the message; the coordinator retries, other sites keep working; a deploy with no answer leaves its drone `unknown` until the site shows the instance or the boot timeout passes',
  },
  ESTUARY_CO_BATCH: {
    meaning: "a Slurm command failed, timed out, printed what is not JSON, or (22.05, slurmctld down) exited 0 with an `errors` array — the message carries Slurm's own words; no drone is started or stopped while the batch system cannot be read",
    fix: "check slurmctld, `SLURM_CONF` (`batch-system.slurm-conf`) and that the coordinator's user may run `scontrol update`",
  },
  ESTUARY_CO_BATCH_PROGRAM: {
    meaning: 'a Slurm command (`squeue`, `sinfo`, `scontrol`, `sacct`) is not installed where the coordinator looks: `batch-system.bin-dir`, else `PATH`; the message names where it looked',
    fix: "install Slurm's client commands there (sacct beside squeue), or point `bin-dir` at them; without sacct, `history: off` learns no run times",
  },
  ESTUARY_CO_NO_HISTORY: {
    meaning: 'Slurm keeps no history the coordinator can read for run times: job completion is disabled or not written to a file (`JobCompType`) where `history: completion` asks for it, or accounting storage and job completion are both disabled; decisions use time limits and `runtime`',
    fix: '`history: auto` or `accounting` on a cluster with slurmdbd; else `JobCompType=jobcomp/filetxt` with `JobCompLoc` in slurm.conf; or `history: off`',
  },
  ESTUARY_CO_COMPLETION_LOG: {
    meaning: "the job completion log (`JobCompLoc`) cannot be read on the coordinator's host: it is not there (slurmctld writes it on its own host), cannot be opened, is not a regular file (a directory, FIFO or device), is larger than the coordinator reads, or slurm.conf cannot be read to find it",
    fix: "run the coordinator where the log is, or share it read-only at the same path; point `JobCompLoc` at the log file itself; rotate a log past 500 MiB; or learn from slurmdbd (`history: accounting`), the trustworthy source",
  },
  ESTUARY_CO_DATA: {
    meaning: "a site's gateway did not answer what it holds, how big an input is, or a pre-warm (unreachable, wrong admin token, refused)",
    fix: "check the site's `gateway.url` and `gateway.token-file` (the gateway's `--admin-token`); placement goes on with the last answer, a pre-warm is asked again",
  },
  ESTUARY_CO_STATUS_UNREACHABLE: {
    meaning: '`estuary coordinator status` could not reach the coordinator',
    fix: 'check it runs and give `--url` or the same `--listen`/`--config`',
  },
  ESTUARY_CO_BAD_ACTION: {
    meaning: '`estuary coordinator` was given an action other than `status` or `simulate`',
    fix: 'run `estuary coordinator`, `estuary coordinator status` or `estuary coordinator simulate FILE`',
  },
  ESTUARY_CO_TRACE: {
    meaning: 'a simulator trace (SWF or JSON jobs) has a line or job that cannot be read',
    fix: 'fix the line or job the message names; docs/BENCHMARKING.md gives both formats',
  },
  ESTUARY_CO_HOLD_UNDECLARED: {
    meaning: '`hold: true`, but no node (FUTURE ones included) carries `estuary_hold`: slurmctld refuses every job the job_submit plugin holds ("Invalid feature specification"); logged once and shown at the top of the page',
    fix: 'declare it on a node that never runs jobs: `NodeName=estuary-hold State=FUTURE Features=estuary_hold` in slurm.conf, then `scontrol reconfigure`',
  },
  ESTUARY_CO_HOLD_MIXED: {
    meaning: 'a pending job requires `estuary_hold` beside features of its own (`gpu&estuary_hold`); the coordinator never rewrites a user\'s constraint, so no node can run it; named once per job',
    fix: 'have the job_submit plugin add `estuary_hold` only to jobs that ask for no features; release the job with the `scontrol update` line the message gives',
  },
  ESTUARY_CO_SCENARIO: {
    meaning: 'a simulator scenario file is not valid YAML/JSON or a key in it is wrong',
    fix: 'correct the key the message names; docs/BENCHMARKING.md describes scenario files',
  },
} satisfies Record<string, CodeDoc>;

export class CoordinatorError extends EstuaryError {
  constructor(code: keyof typeof COORDINATOR_CODES, message: string, exitCode = 1) {
    super(code, message, { exitCode });
    this.name = 'CoordinatorError';
  }
}

/** True for a call that got no answer: whether the site did it is unknown (see siteUnanswered). */
export function unanswered(err: unknown): boolean {
  return (err as { unanswered?: boolean } | undefined)?.unanswered === true;
}

/**
 * What a config, scenario or trace wrote, quoted in an error bound for a terminal: a trace from a
 * public archive must not retitle or clear the reader's terminal (ESC, BEL shown as `\x1b`, `\x07`).
 */
const quoted = escapeControls;

export const coordinatorErrors = {
  badConfig: (key: string, problem: string) =>
    new CoordinatorError(
      'ESTUARY_CO_CONFIG',
      `coordinator config: ${quoted(key)}: ${quoted(problem)}; see docs/COORDINATOR.md, "Configuration"`,
      2,
    ),
  listen: (where: string, reason: string) =>
    new CoordinatorError(
      'ESTUARY_CO_LISTEN',
      `cannot listen on ${where} (${reason}); choose another address with --listen`,
      2,
    ),
  noSites: () =>
    new CoordinatorError(
      'ESTUARY_CO_NO_SITES',
      'coordinator config: no sites: give at least one site under `sites:` (see docs/COORDINATOR.md)',
      2,
    ),
  stateDir: (path: string, reason: string) =>
    new CoordinatorError(
      'ESTUARY_CO_STATE_DIR',
      `cannot use state directory ${path}: ${reason}; give a writable --state-dir`,
      2,
    ),
  registryLocked: (path: string) =>
    new CoordinatorError(
      'ESTUARY_CO_REGISTRY_LOCKED',
      `drone registry ${path} is in use by another coordinator (its pid in registry.pid beside it); run one coordinator per registry`,
      2,
    ),
  registryVersion: (path: string, found: number, expected: number) =>
    new CoordinatorError(
      'ESTUARY_CO_REGISTRY_VERSION',
      `drone registry ${path} has format ${found}, this estuary reads ${expected}; use the estuary release that wrote it`,
      2,
    ),
  orphanedDrones: (site: string, ids: readonly string[]) =>
    new CoordinatorError(
      'ESTUARY_CO_SITE_REMOVED',
      `the registry holds ${ids.length} live drone(s) at site ${site} (${ids.slice(0, 3).join(', ')}) that the config no longer describes; put the site and its machine types back (quota: 0 drains it), then remove it once its drones are down`,
      2,
    ),
  siteFailed: (site: string, op: string, reason: string) =>
    new CoordinatorError('ESTUARY_CO_SITE', `site ${site}: ${op} failed: ${reason}`),
  /** No answer (timeout, connection lost): the site may have done it anyway. */
  siteUnanswered: (site: string, op: string, reason: string) =>
    Object.assign(new CoordinatorError('ESTUARY_CO_SITE', `site ${site}: ${op} got no answer: ${reason}`), { unanswered: true }),
  batchFailed: (op: string, reason: string) =>
    new CoordinatorError('ESTUARY_CO_BATCH', `batch system: ${op} failed: ${reason}`),
  batchProgramMissing: (program: string, where: string) =>
    new CoordinatorError(
      'ESTUARY_CO_BATCH_PROGRAM',
      `batch system: ${program} not found (${where}); install Slurm's ${program} there${program === 'sacct' ? ' beside squeue, or set `batch-system.history: off` to learn no run times' : ', or set `batch-system.bin-dir`'}`,
    ),
  noHistory: (message: string) => new CoordinatorError('ESTUARY_CO_NO_HISTORY', `batch system: ${message}`),
  completionLog: (problem: string, fix: string) => new CoordinatorError('ESTUARY_CO_COMPLETION_LOG', `batch system: ${problem}; ${fix}`),
  dataFailed: (site: string, op: string, reason: string) =>
    new CoordinatorError('ESTUARY_CO_DATA', `site ${site}: gateway ${op} failed: ${reason}; check gateway.url and gateway.token-file`),
  discoveryFailed: (url: string, reason: string) =>
    new CoordinatorError('ESTUARY_CO_DATA', `discovery ${url}: reading /api/v1/registry failed: ${reason}; check the coordinator's discovery URL`),
  statusUnreachable: (url: string, reason: string) =>
    new CoordinatorError(
      'ESTUARY_CO_STATUS_UNREACHABLE',
      `cannot read coordinator status at ${url}: ${reason}; is \`estuary coordinator\` running with that --listen?`,
      2,
    ),
  badAction: (action: string) =>
    new CoordinatorError(
      'ESTUARY_CO_BAD_ACTION',
      `unknown action "${action}"; use \`estuary coordinator\` to run, \`estuary coordinator status\`, or \`estuary coordinator simulate FILE\``,
      2,
    ),
  badTrace: (file: string, where: string, problem: string) =>
    new CoordinatorError(
      'ESTUARY_CO_TRACE',
      `trace ${quoted(file)}: ${quoted(where)}: ${quoted(problem)}; see docs/BENCHMARKING.md, "Trace formats"`,
      2,
    ),
  badScenario: (file: string, key: string, problem: string) =>
    new CoordinatorError(
      'ESTUARY_CO_SCENARIO',
      `scenario ${quoted(file)}: ${quoted(key)}: ${quoted(problem)}; see docs/BENCHMARKING.md, "Scenario files"`,
      2,
    ),
};

/** This role's part of docs/ERRORS.md. */
export const coordinatorErrorsDoc: ErrorsSection = {
  title: 'coordinator',
  intro:
    'Configuration errors end `estuary coordinator` with exit status 2 and one line naming the key (`sites.cloud.quota`, `controller.rules.0.pending-for`). Failures of a site or of the batch system while running are logged with their code and retried each interval; they never end the coordinator (docs/COORDINATOR.md, "Failures").',
  tables: [codeTable(COORDINATOR_CODES)],
};
