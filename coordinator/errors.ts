// Errors a user of `estuary coordinator` can cause or meet, with stable codes listed in
// docs/ERRORS.md. Config errors exit 2 (usage); failures of a site or the batch system are logged
// with their code and retried, they never end the coordinator.

import { EstuaryError } from '../lib/errors.ts';
import { escapeControls } from '../lib/terminal-text.ts';

export class CoordinatorError extends EstuaryError {
  constructor(code: string, message: string, exitCode = 1) {
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
