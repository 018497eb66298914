// Errors a user of `estuary discovery` or `estuary discover` can cause, with stable codes.
// Every code is listed in docs/ERRORS.md; a code, once published, keeps its meaning.

import { type CodeDoc, codeTable, EstuaryError, type ErrorsSection } from '../lib/errors.ts';

/** Each code's row in docs/ERRORS.md, in the order listed there. */
export const DISCOVERY_CODES = {
  ESTUARY_DISC_BAD_HMAC_KEY: {
    meaning: 'an `--hmac-key` value is not `SECRET` or `SITE=SECRET`, or a secret is shorter than 16 characters',
    fix: 'fix the key; one per line in an `@FILE`',
  },
  ESTUARY_DISC_KEY_FILE: {
    meaning: '`--hmac-key @FILE` names a file that cannot be read',
    fix: 'check the path and permissions',
  },
  ESTUARY_DISC_NO_KEYS: {
    meaning: 'no `--hmac-key` and no `--shoal-compat`: every heartbeat would be dropped',
    fix: 'give the keys your agents sign with, or enable `--shoal-compat` for unsigned Shoal agents',
  },
  ESTUARY_DISC_SITE_MAP: {
    meaning: 'the `--site-map` file cannot be read or is not a valid site map',
    fix: 'fix the file; the message names the entry; format in docs/DISCOVERY.md',
  },
  ESTUARY_DISC_GEO_DB: {
    meaning: 'a `--geo-db` file cannot be opened as a MaxMind-format database',
    fix: 'give a city database (`.mmdb`), or `--geo-db none`',
  },
  ESTUARY_DISC_LISTEN: {
    meaning: 'the `--listen` address is taken or not allowed; discovery exits 2 before it connects to the broker',
    fix: 'pick another address or port, or stop what holds it',
  },
  ESTUARY_DISC_AMQP_AUTH: {
    meaning: 'the AMQP broker refused discovery: at start (exit 2) its login (wrong user or password) or the virtual host; later it is logged with this code, shown on the page and as `estuary_discovery_broker{state="refused"} 1`, and retried. Also a user without permission to declare its queue or bind it to the exchange',
    fix: 'check the user and password in `--amqp`, that the user exists (`rabbitmqctl list_users`) and its permissions (`rabbitmqctl list_permissions -p VHOST`)',
  },
  ESTUARY_DISC_BAD_QUERY: {
    meaning: 'a REST query has a bad parameter (N out of 1–100, bad `lat`/`lon`/`ip`, unknown `upstream`), or an absolute-form (proxy) request line; answered with HTTP 400. Also: `estuary discover` without `--server` or `--fallback`',
    fix: 'correct the request',
  },
  ESTUARY_DISC_NO_SUCH_CACHE: {
    meaning: '`/api/v1/caches/ID` names no registered cache (HTTP 404)',
    fix: 'list caches with `/api/v1/registry`',
  },
  ESTUARY_DISC_UNREACHABLE: {
    meaning: '`estuary discover`: no discovery server answered and there are no fallback proxies; nothing was changed',
    fix: 'check `--server`, or configure `--fallback` proxies (or keep a `CVMFS_HTTP_PROXY` line in the `--write` file)',
  },
  ESTUARY_DISC_NO_WORKING_PROXY: {
    meaning: '`estuary discover`: every offered proxy failed the test fetch and there are no fallbacks; nothing was changed',
    fix: 'check `--test-url` is reachable through the caches; configure `--fallback`',
  },
  ESTUARY_DISC_WRITE: {
    meaning: "`estuary discover --write`: the config file exists but could not be read, or could not be replaced; the old file is unchanged (a symlink's target is the file written)",
    fix: 'check the file is readable and its directory writable by the user running the client',
  },
  ESTUARY_DISC_OUTPUT: {
    meaning: 'more than one of `--print`, `--write` and `--pac`',
    fix: 'choose one',
  },
} satisfies Record<string, CodeDoc>;

export class DiscoveryError extends EstuaryError {
  constructor(code: keyof typeof DISCOVERY_CODES, message: string, exitCode = 2) {
    super(code, message, { exitCode });
    this.name = 'DiscoveryError';
  }
}

/** Logged while the broker refuses discovery after start-up; the start-up error has it too. */
export const AMQP_AUTH_CODE: keyof typeof DISCOVERY_CODES = 'ESTUARY_DISC_AMQP_AUTH';

export const discoveryErrors = {
  amqpAuth: (message: string) => new DiscoveryError(AMQP_AUTH_CODE, message, 2),
  badHmacKey: (reason: string) =>
    new DiscoveryError(
      'ESTUARY_DISC_BAD_HMAC_KEY',
      `bad --hmac-key: ${reason}; give SECRET or SITE=SECRET (16+ characters), or @FILE`,
    ),
  keyFileUnreadable: (path: string, reason: string) =>
    new DiscoveryError('ESTUARY_DISC_KEY_FILE', `cannot read HMAC key file ${path}: ${reason}`),
  noKeys: () =>
    new DiscoveryError(
      'ESTUARY_DISC_NO_KEYS',
      'no --hmac-key given and --shoal-compat is off, so every heartbeat would be dropped; give a key, or enable --shoal-compat to accept unsigned Shoal agents',
    ),
  siteMap: (path: string, reason: string) =>
    new DiscoveryError(
      'ESTUARY_DISC_SITE_MAP',
      `site map ${path}: ${reason}; see docs/DISCOVERY.md for the format`,
    ),
  geoDb: (path: string, reason: string) =>
    new DiscoveryError(
      'ESTUARY_DISC_GEO_DB',
      `cannot open IP database ${path}: ${reason}; give a MaxMind-format city database or --geo-db none`,
    ),
  listen: (where: string, reason: string) =>
    new DiscoveryError(
      'ESTUARY_DISC_LISTEN',
      `cannot listen on ${where}: ${reason}; pick another --listen address`,
      2,
    ),
  badQuery: (what: string) => new DiscoveryError('ESTUARY_DISC_BAD_QUERY', what, 2),
  // The worker-node client.
  noServerAnswer: (detail: string) =>
    new DiscoveryError(
      'ESTUARY_DISC_UNREACHABLE',
      `no discovery server answered (${detail}) and no --fallback proxies are configured; nothing was changed`,
      1,
    ),
  noWorkingProxy: (tried: number) =>
    new DiscoveryError(
      'ESTUARY_DISC_NO_WORKING_PROXY',
      `none of the ${tried} proxies offered passed the test fetch and no --fallback proxies are configured; nothing was changed`,
      1,
    ),
  writeFailed: (path: string, reason: string) =>
    new DiscoveryError('ESTUARY_DISC_WRITE', `cannot write ${path}: ${reason}; the old file is unchanged`, 1),
  conflictingOutputs: () =>
    new DiscoveryError('ESTUARY_DISC_OUTPUT', 'choose one of --print, --write FILE and --pac'),
};

/** This role's part of docs/ERRORS.md. */
export const discoveryErrorsDoc: ErrorsSection = {
  title: 'discovery',
  tables: [codeTable(DISCOVERY_CODES)],
};
