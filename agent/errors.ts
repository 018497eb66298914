// Errors a user of `estuary agent` can cause, with stable codes, listed in docs/ERRORS.md.

import { type CodeDoc, codeTable, EstuaryError, type ErrorsSection } from '../lib/errors.ts';

/** Each code's row in docs/ERRORS.md, in the order listed there. */
export const AGENT_CODES = {
  ESTUARY_AGENT_NO_CACHE_URL: {
    meaning: '`estuary agent` was started without `--cache-url`',
    fix: 'give the address of the cache the agent runs beside, e.g. `--cache-url http://127.0.0.1:3128`',
  },
  ESTUARY_AGENT_BAD_HMAC_KEY: {
    meaning: 'the `--hmac-key` value is not `SECRET` or `SITE=SECRET`, or the secret is shorter than 16 characters',
    fix: 'use a longer secret; a shared secret that contains `=` is written `shared=SECRET`',
  },
  ESTUARY_AGENT_KEY_FILE: {
    meaning: '`--hmac-key @FILE` names a file that cannot be read',
    fix: "check the path and that the agent's user may read it",
  },
  ESTUARY_AGENT_KEY_SITE: {
    meaning: 'a per-site key (`SITE=SECRET`) is given but `--site` names another site (or none); discovery would drop every heartbeat',
    fix: "set `--site` to the key's site",
  },
  ESTUARY_AGENT_AMQP_AUTH: {
    meaning: 'the AMQP broker refused the agent: at start (exit 2) its login (wrong user or password) or the virtual host; later (logged, retried) also a publish the user has no write permission for. Never reported as "cannot reach the broker"',
    fix: 'check the user and password in `--amqp` (`amqp://USER:PASSWORD@HOST`), that the user exists (`rabbitmqctl list_users`) and its permissions on the virtual host (`rabbitmqctl list_permissions -p VHOST`)',
  },
  ESTUARY_AGENT_LOCATION: {
    meaning: 'only one of `--lat` and `--lon` is given',
    fix: 'give both, or neither to let discovery locate the cache',
  },
} satisfies Record<string, CodeDoc>;

export class AgentError extends EstuaryError {
  constructor(code: keyof typeof AGENT_CODES, message: string, exitCode = 2) {
    super(code, message, { exitCode });
    this.name = 'AgentError';
  }
}

/** Logged while the broker refuses the agent after start-up; the start-up error has it too. */
export const AMQP_AUTH_CODE: keyof typeof AGENT_CODES = 'ESTUARY_AGENT_AMQP_AUTH';

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

/** This role's part of docs/ERRORS.md. */
export const agentErrorsDoc: ErrorsSection = {
  title: 'agent',
  tables: [codeTable(AGENT_CODES)],
};
