// The gateway's error catalogue. Codes are stable and listed in docs/ERRORS.md (## gateway);
// a code, once published, is never reused for another meaning.

import { type CodeDoc, codeTable, type ErrorsSection, errorsOf } from '../lib/errors.ts';
import { s3ErrorsTable } from './s3/errors.ts';

/** Each code's row in docs/ERRORS.md, in the order listed there. */
export const GATEWAY_CODES = {
  ESTUARY_GW_CACHE_DIR: {
    meaning:
      "the `--cache-dir` cannot be created, written or read (permission, read-only file system, a file in the way, disk full; also its `v1/` when the gateway's user cannot list it). One entry sub-directory or file it cannot read does not stop the start: it is skipped with a warning naming it",
    fix: "point `--cache-dir` at a writable directory on a disk with room, owned by the gateway's user",
  },
  ESTUARY_GW_CACHE_DIR_LOCKED: {
    meaning: "another running gateway uses the `--cache-dir`; the message gives its PID (two gateways on one directory would cut each other's fills)",
    fix: 'stop that gateway, or give this one its own `--cache-dir`; a directory left by a gateway that crashed or was killed is taken over at once',
  },
  ESTUARY_GW_LISTEN: {
    meaning: 'the `--listen` address is taken or not allowed (ports below 1024 need privileges)',
    fix: 'choose another address or port, or stop what holds it',
  },
  ESTUARY_GW_ACCESS_LOG: {
    meaning: 'the `--access-log` file cannot be created or appended to',
    fix: 'give a writable path, or `-` for stdout',
  },
  ESTUARY_GW_CRASH_LOOP: {
    meaning: "the gateway's worker processes died 5 times within 60 s, so the primary stopped restarting them and the service exits (exit 2). A single crash only restarts the worker",
    fix: 'find the line `gateway worker crashed` in the log: its `request` field names the request each worker was serving and `err` the stack; report it, and keep that URL away from the gateway until fixed',
  },
  ESTUARY_GW_PEER_SELF: {
    meaning: '`--peers` is set but `--peer-self` is missing or not one of the peers',
    fix: "add `--peer-self` with this gateway's URL exactly as written in `--peers`",
  },
  ESTUARY_GW_S3_CONFIG: {
    meaning: '`--s3` without a usable `--s3-issuer-key-file` (missing, unreadable, shorter than 32 characters), or without keys for a store (`--s3-credentials` or `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`); also `estuary gateway credentials issue` without a key file or scope, or with a `--prefix` that has a `.` or `..` segment (also percent-encoded or a Unicode lookalike) or an empty segment `//` (exit 2)',
    fix: 'do what the message says; see docs/STAGING.md',
  },
  ESTUARY_GW_ADMIN_DISABLED: {
    meaning: 'an admin API request (`/estuary/v1/admin/…`) reached a gateway started without `--admin-token` (HTTP 403)',
    fix: 'start the gateway with `--admin-token` (or `ESTUARY_GATEWAY_ADMIN_TOKEN`)',
  },
  ESTUARY_GW_ADMIN_TOKEN: {
    meaning: 'an admin API request without `Authorization: Bearer <token>` or with the wrong token (HTTP 401)',
    fix: 'send the token the gateway was started with',
  },
  ESTUARY_GW_ADMIN_LOCKED: {
    meaning: 'more than 5 admin API requests with a wrong or missing token from one client address within a minute (HTTP 429); each failure is logged with the address',
    fix: 'wait a minute and send the right token',
  },
  ESTUARY_GW_ADMIN_REQUEST: {
    meaning: 'a purge request whose JSON body has neither `url` nor `prefix` (HTTP 400)',
    fix: 'send `{"url": "http://…"}` or `{"prefix": "http://host/path/"}`',
  },
  ESTUARY_GW_METHOD: {
    meaning: 'one of the gateway\'s own paths (`/metrics`, `/healthz`, `/estuary/v1/…`, `/` in forward mode) asked with a method it does not serve there, such as `POST /estuary/v1/status` (HTTP 405, with `Allow` listing the methods it does serve)',
    fix: 'use a method from `Allow` (`GET` or `HEAD` for the pages)',
  },
  ESTUARY_GW_NO_SUCH_PATH: {
    meaning: 'an origin-form request under `/estuary/v1/` that names no page of the gateway (HTTP 404)',
    fix: 'use `/estuary/v1/status`, `/estuary/v1/summary`, `/metrics` or `/healthz`',
  },
} satisfies Record<string, CodeDoc>;

const gatewayError = errorsOf(GATEWAY_CODES);

const BAD_INPUT = { exitCode: 2 };

export const gatewayErrors = {
  cacheDir: (dir: string, reason: string) =>
    gatewayError(
      'ESTUARY_GW_CACHE_DIR',
      `cache directory ${dir} is not usable (${reason}); pick a writable directory with --cache-dir`,
      BAD_INPUT,
    ),
  cacheDirLocked: (dir: string, pid: number | undefined) =>
    gatewayError(
      'ESTUARY_GW_CACHE_DIR_LOCKED',
      `cache directory ${dir} is in use by another gateway (${pid === undefined ? 'its PID is unknown' : `PID ${pid}`}); ` +
        'stop that gateway first, or give this one its own --cache-dir',
      BAD_INPUT,
    ),
  listen: (addr: string, reason: string) =>
    gatewayError(
      'ESTUARY_GW_LISTEN',
      `cannot listen on ${addr} (${reason}); choose another address with --listen`,
      BAD_INPUT,
    ),
  accessLog: (file: string, reason: string) =>
    gatewayError(
      'ESTUARY_GW_ACCESS_LOG',
      `cannot append to access log ${file} (${reason}); give a writable file, or - for stdout, with --access-log`,
      BAD_INPUT,
    ),
  s3Config: (message: string) => gatewayError('ESTUARY_GW_S3_CONFIG', message, BAD_INPUT),
  crashLoop: (deaths: number, windowS: number) =>
    gatewayError(
      'ESTUARY_GW_CRASH_LOOP',
      `gateway workers died ${deaths} times within ${windowS} s; stopped restarting them. The log line ` +
        `"gateway worker crashed" names the request each one was serving`,
      BAD_INPUT,
    ),
  peerSelf: () =>
    gatewayError(
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
} as const satisfies Record<string, keyof typeof GATEWAY_CODES>;

/** This role's part of docs/ERRORS.md. */
export const gatewayErrorsDoc: ErrorsSection = {
  title: 'gateway',
  intro:
    'Start-up errors end `estuary gateway` with exit status 2 and one line on stderr (a malformed `--upstream` or `--allow-dest` value is reported as `ESTUARY_CONFIG_INVALID_VALUE`, naming the flag). Errors the gateway answers over HTTP carry the code in the JSON body (admin API) and, for errors it generates while proxying, an RFC 9209 `Proxy-Status: estuary; error=<type>; details="…"` header, so CVMFS clients count them as proxy failures rather than server failures. docs/CACHING.md lists the `error=` types.',
  tables: [codeTable(GATEWAY_CODES), s3ErrorsTable],
};
