// Errors a user of `estuary discovery` or `estuary discover` can cause, with stable codes.
// Every code is listed in docs/ERRORS.md; a code, once published, keeps its meaning.

import { EstuaryError } from '../lib/errors.ts';

export class DiscoveryError extends EstuaryError {
  constructor(code: string, message: string, exitCode = 2) {
    super(code, message, { exitCode });
    this.name = 'DiscoveryError';
  }
}

/** Logged while the broker refuses discovery after start-up; the start-up error has it too. */
export const AMQP_AUTH_CODE = 'ESTUARY_DISC_AMQP_AUTH';

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
