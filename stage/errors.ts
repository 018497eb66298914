// The error catalogue of `estuary stage`. Codes are stable and listed in docs/ERRORS.md (## stage).

import { EstuaryError } from '../lib/errors.ts';

const BAD_INPUT = { exitCode: 2 };

export const stageErrors = {
  arguments: (message: string) => new EstuaryError('ESTUARY_STAGE_ARGS', message, BAD_INPUT),
  source: (path: string, reason: string) =>
    new EstuaryError('ESTUARY_STAGE_SOURCE', `cannot read ${path} (${reason}); check the path`, BAD_INPUT),
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
} as const;
