// The gateway's error catalogue. Codes are stable and listed in docs/ERRORS.md (## gateway);
// a code, once published, is never reused for another meaning.

import { EstuaryError } from '../lib/errors.ts';

const BAD_INPUT = { exitCode: 2 };

export const gatewayErrors = {
  cacheDir: (dir: string, reason: string) =>
    new EstuaryError(
      'ESTUARY_GW_CACHE_DIR',
      `cache directory ${dir} is not usable (${reason}); pick a writable directory with --cache-dir`,
      BAD_INPUT,
    ),
  cacheDirLocked: (dir: string, pid: number | undefined) =>
    new EstuaryError(
      'ESTUARY_GW_CACHE_DIR_LOCKED',
      `cache directory ${dir} is in use by another gateway (${pid === undefined ? 'its PID is unknown' : `PID ${pid}`}); ` +
        'stop that gateway first, or give this one its own --cache-dir',
      BAD_INPUT,
    ),
  listen: (addr: string, reason: string) =>
    new EstuaryError(
      'ESTUARY_GW_LISTEN',
      `cannot listen on ${addr} (${reason}); choose another address with --listen`,
      BAD_INPUT,
    ),
  accessLog: (file: string, reason: string) =>
    new EstuaryError(
      'ESTUARY_GW_ACCESS_LOG',
      `cannot append to access log ${file} (${reason}); give a writable file, or - for stdout, with --access-log`,
      BAD_INPUT,
    ),
  s3Config: (message: string) => new EstuaryError('ESTUARY_GW_S3_CONFIG', message, BAD_INPUT),
  crashLoop: (deaths: number, windowS: number) =>
    new EstuaryError(
      'ESTUARY_GW_CRASH_LOOP',
      `gateway workers died ${deaths} times within ${windowS} s; stopped restarting them. The log line ` +
        `"gateway worker crashed" names the request each one was serving`,
      BAD_INPUT,
    ),
  peerSelf: () =>
    new EstuaryError(
      'ESTUARY_GW_PEER_SELF',
      '--peers needs --peer-self naming this gateway exactly as it appears in the peer list',
      BAD_INPUT,
    ),
} as const;

/** Codes of errors the gateway answers over HTTP (body text and Proxy-Status details carry them). */
export const GATEWAY_HTTP_CODES = {
  adminToken: 'ESTUARY_GW_ADMIN_TOKEN',
  adminDisabled: 'ESTUARY_GW_ADMIN_DISABLED',
  adminRequest: 'ESTUARY_GW_ADMIN_REQUEST',
  adminLocked: 'ESTUARY_GW_ADMIN_LOCKED',
  method: 'ESTUARY_GW_METHOD',
  noSuchPath: 'ESTUARY_GW_NO_SUCH_PATH',
} as const;
