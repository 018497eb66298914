// The error catalogue of `estuary stage`. Codes are stable and listed in docs/ERRORS.md (## stage).

import { EstuaryError } from '../lib/errors.ts';

/** Exit statuses a job script can branch on (docs/ERRORS.md, ## stage). */
export const EXIT = { ok: 0, someFailed: 1, badInput: 2, sigint: 130, sigterm: 143 } as const;

const BAD_INPUT = { exitCode: EXIT.badInput };

export const stageErrors = {
  arguments: (message: string) => new EstuaryError('ESTUARY_STAGE_ARGS', message, BAD_INPUT),
  source: (path: string, reason: string) =>
    new EstuaryError('ESTUARY_STAGE_SOURCE', `cannot read ${path} (${reason}); check the path`, BAD_INPUT),
  destination: (path: string, reason: string) =>
    new EstuaryError('ESTUARY_STAGE_DESTINATION', `cannot write to ${path} (${reason}); check the path and its permissions`, BAD_INPUT),
  credentials: (file: string, reason: string) =>
    new EstuaryError(
      'ESTUARY_STAGE_CREDENTIALS',
      `cannot use credential file ${file} (${reason}); give the JSON that estuary gateway credentials issue prints`,
      BAD_INPUT,
    ),
  store: (what: string, reason: string) =>
    new EstuaryError(
      'ESTUARY_STAGE_STORE',
      `${what} failed: ${reason}; check --endpoint, the credentials and that the bucket exists`,
      BAD_INPUT,
    ),
  locked: (dir: string, pid: number | undefined) =>
    new EstuaryError(
      'ESTUARY_STAGE_LOCKED',
      `${dir} is being written by another estuary stage (${pid === undefined ? 'its PID unknown' : `process ${pid}`}); wait for it to end, or stage into another directory`,
      BAD_INPUT,
    ),
  protocol: (what: string, reason: string) =>
    new EstuaryError('ESTUARY_STAGE_STORE', `${what} failed: the store answered ${reason}; this is a fault of the store or a proxy before it, report it to its operators`, BAD_INPUT),
  empty: (where: string) =>
    new EstuaryError('ESTUARY_STAGE_EMPTY', `no objects under ${where} — check the prefix`, BAD_INPUT),
  emptySource: (dir: string) =>
    new EstuaryError('ESTUARY_STAGE_EMPTY', `no files under ${dir} — check the path`, BAD_INPUT),
  tooMany: (where: string, max: number) =>
    new EstuaryError(
      'ESTUARY_STAGE_TOO_MANY',
      `the listing of ${where} holds more than ${max} objects; stage a narrower prefix or raise --max-objects`,
      BAD_INPUT,
    ),
  collisions: (list: string) =>
    new EstuaryError(
      'ESTUARY_STAGE_COLLISION',
      `keys that map to one local path were not copied (the first listed of each was): ${list}; rename them in the store or stage them separately`,
      { exitCode: EXIT.someFailed },
    ),
  interrupted: (line: string, signal: 'SIGINT' | 'SIGTERM') =>
    new EstuaryError('ESTUARY_STAGE_INTERRUPTED', line, { exitCode: signal === 'SIGINT' ? EXIT.sigint : EXIT.sigterm }),
} as const;
