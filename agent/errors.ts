// Errors a user of `estuary agent` can cause, with stable codes, listed in docs/ERRORS.md.

import { EstuaryError } from '../lib/errors.ts';

export class AgentError extends EstuaryError {
  constructor(code: string, message: string, exitCode = 2) {
    super(code, message, { exitCode });
    this.name = 'AgentError';
  }
}

/** Logged while the broker refuses the agent after start-up; the start-up error has it too. */
export const AMQP_AUTH_CODE = 'ESTUARY_AGENT_AMQP_AUTH';

export const agentErrors = {
  amqpAuth: (message: string) => new AgentError(AMQP_AUTH_CODE, message),
  noCacheUrl: () =>
    new AgentError(
      'ESTUARY_AGENT_NO_CACHE_URL',
      'no --cache-url: give the address of the cache this agent runs beside, e.g. http://127.0.0.1:3128',
    ),
  badHmacKey: (reason: string) =>
    new AgentError(
      'ESTUARY_AGENT_BAD_HMAC_KEY',
      `bad --hmac-key: ${reason}; give SECRET or SITE=SECRET (16+ characters), or @FILE`,
    ),
  keyFileUnreadable: (path: string, reason: string) =>
    new AgentError('ESTUARY_AGENT_KEY_FILE', `cannot read HMAC key file ${path}: ${reason}`),
  keySiteMismatch: (keyId: string, site: string | undefined) =>
    new AgentError(
      'ESTUARY_AGENT_KEY_SITE',
      `the HMAC key is the key of site ${keyId} but --site is ${site ?? 'not set'}; discovery would drop every heartbeat. Set --site ${keyId}`,
    ),
  halfLocation: () =>
    new AgentError(
      'ESTUARY_AGENT_LOCATION',
      'give both --lat and --lon, or neither (discovery then locates the cache)',
    ),
};
