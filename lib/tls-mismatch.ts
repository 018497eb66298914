// An https:// address given for a server that speaks plain HTTP. OpenSSL reads the server's
// "HTTP/1.1 400" as a TLS record of an unknown version and fails the handshake with "wrong
// version number" (ERR_SSL_WRONG_VERSION_NUMBER, or EPROTO and that text inside an SDK's error);
// every role that takes an address (mount, stage, discover, agent, gateway) names the fix instead.
// The mirror, an http:// address for a port that speaks TLS, is named where a probe can tell
// (`estuary mount`): the port completes a TLS handshake, or answers as Go's net/http and nginx do.

import { type CodeDoc, type EstuaryError, errorsOf } from './errors.ts';

/** The code's row in docs/ERRORS.md. */
export const NOT_TLS_CODES = {
  ESTUARY_ENDPOINT_NOT_TLS: {
    meaning: 'an `https://` address (`--endpoint` of `mount`, `--cache-url` of `agent`) names a server that answers in plain HTTP: OpenSSL\'s "wrong version number" (exit 2). `discover` gives the same reason for a `--server` it skips, and the gateway answers `Proxy-Status: …; error=tls_protocol_error` for such an `--s3` store',
    fix: 'write the address with `http://`, as the message shows',
  },
  ESTUARY_ENDPOINT_NEEDS_TLS: {
    meaning: 'an `http://` address (`--endpoint` of `mount`) names a port that speaks TLS: it completes a TLS handshake, or answers as Go\'s net/http ("Client sent an HTTP request to an HTTPS server") and nginx do, or redirects to the same host\'s `https://` address (exit 2)',
    fix: 'write the address with `https://`, as the message shows',
  },
} satisfies Record<string, CodeDoc>;

const WRONG_VERSION = /wrong version number/i;

/** True when `err`, or anything it wraps, is a TLS handshake that met plain HTTP. */
export function isPlainHttpAnswer(err: unknown, depth = 0): boolean {
  if (err === null || typeof err !== 'object' || depth > 5) return false;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (e.code === 'ERR_SSL_WRONG_VERSION_NUMBER') return true;
  if (typeof e.message === 'string' && WRONG_VERSION.test(e.message)) return true;
  if (Array.isArray(e.errors) && e.errors.some((x) => isPlainHttpAnswer(x, depth + 1))) return true;
  return isPlainHttpAnswer(e.cause, depth + 1);
}

/** The same address with http:// for https://. */
export function plainHttp(url: string): string {
  return url.replace(/^https:/i, 'http:');
}

/** The reason, without the address's owner: "does not speak TLS; use http://…". */
export function notTlsReason(url: string): string {
  return `the endpoint does not speak TLS; use ${plainHttp(url)}`;
}

/** The error that ends a command given `where` (a flag such as --endpoint) = `url`. */
export function notTlsError(where: string, url: string): EstuaryError {
  return errorsOf(NOT_TLS_CODES)('ESTUARY_ENDPOINT_NOT_TLS', `${where} ${url}: ${notTlsReason(url)}`, {
    exitCode: 2,
  });
}

/** The same address with https:// for http://. */
export function tlsHttp(url: string): string {
  return url.replace(/^http:/i, 'https:');
}

/** An http:// `url` given as `where` names a port that speaks TLS; `suggested` is where to go. */
export function speaksTlsError(where: string, url: string, suggested = tlsHttp(url)): EstuaryError {
  return errorsOf(NOT_TLS_CODES)('ESTUARY_ENDPOINT_NEEDS_TLS', `${where} ${url}: the endpoint speaks TLS; use ${suggested}`, {
    exitCode: 2,
  });
}
