// What the endpoint probe's answer says about --endpoint, with no I/O. Only what the S3 client
// would misreport is judged here: silence (it would wait --request-timeout × --retries), an
// answer that is not S3 (a web page passes its bucket check), the scheme on the wrong port, and a
// certificate Node does not trust. Anything else (a refused connection, an S3 error in XML) is
// left to the bucket check that follows, which names it and retries what can be retried.

import type { EstuaryError } from '../lib/errors.ts';
import { isPlainHttpAnswer, notTlsError, speaksTlsError } from '../lib/tls-mismatch.ts';
import { fsErrors } from './errors.ts';

export type EndpointAnswer =
  | {
      readonly kind: 'answer';
      readonly status: number;
      readonly contentType: string;
      readonly location: string;
      /** The first 2 KiB of the body. */
      readonly body: string;
    }
  /** No whole answer within the deadline; `connected`: the connection (and TLS) was made. */
  | { readonly kind: 'timeout'; readonly connected: boolean }
  | { readonly kind: 'error'; readonly code: string; readonly message: string };

export interface EndpointFacts {
  /** --endpoint as given. */
  readonly endpoint: string;
  readonly deadlineMs: number;
  readonly answer: EndpointAnswer;
  /** An http:// port that answered oddly completed a TLS handshake. */
  readonly speaksTls: boolean;
}

/** Node's codes for a certificate chain that ends at no CA it trusts. */
const UNTRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_UNTRUSTED',
]);
/** Other certificate refusals: wrong name, expired, not yet valid, revoked, malformed. */
const CERT_CODE = /^(ERR_TLS_CERT_ALTNAME_INVALID|CERT_[A-Z_]+|ERR_TLS_CERT_[A-Z_]+)$/;

/** Go's net/http and nginx, answering plain HTTP on a TLS port. */
const HTTPS_PORT_TEXT = /HTTP request to an HTTPS server|plain HTTP request was sent to HTTPS port/i;

/** HTML by its markup: a text/html label alone also covers plain-text refusals. */
const isHtml = (a: { body: string }) => /^\s*(<!--.*?-->\s*)?<(!doctype\s+html|html[\s>])/is.test(a.body);
const isJson = (a: { contentType: string }) => /json/i.test(a.contentType);

function answered(f: EndpointFacts, a: Extract<EndpointAnswer, { kind: 'answer' }>): EstuaryError | undefined {
  if (f.speaksTls || HTTPS_PORT_TEXT.test(a.body)) return speaksTlsError('--endpoint', f.endpoint);
  // A plain-HTTP site that sends everyone to its https:// address.
  if (a.status >= 300 && a.status < 400 && /^https:/i.test(a.location) && /^http:/i.test(f.endpoint)) {
    const there = new URL(a.location);
    if (there.hostname === new URL(f.endpoint).hostname) return speaksTlsError('--endpoint', f.endpoint, there.origin);
  }
  // Only a success is judged: that is what the bucket check would take for an empty bucket. An
  // S3 server may hand unsigned requests to something else that refuses them in its own words
  // (Swift's s3api leaves them to Swift, which answers 412 text/html "Bad URL"); the signed
  // bucket check that follows gets the S3 answer and names any refusal.
  if (a.status >= 200 && a.status < 300 && (isHtml(a) || isJson(a))) {
    const what = isHtml(a) ? 'an HTML page' : 'JSON';
    return fsErrors.notS3(f.endpoint, `HTTP ${a.status} with ${what} where S3 answers in XML`);
  }
  return undefined;
}

/** The reason the mount cannot use this endpoint, or undefined to let the bucket check judge. */
export function diagnoseEndpoint(f: EndpointFacts): EstuaryError | undefined {
  const a = f.answer;
  const seconds = `${f.deadlineMs / 1000} s`;
  if (a.kind === 'timeout') {
    const why = a.connected
      ? `it accepted the connection but sent no answer within ${seconds}`
      : `no connection within ${seconds}`;
    return fsErrors.endpointDown(f.endpoint, why);
  }
  if (a.kind === 'answer') return answered(f, a);
  if (isPlainHttpAnswer(a)) return notTlsError('--endpoint', f.endpoint);
  if (f.speaksTls) return speaksTlsError('--endpoint', f.endpoint);
  // Node adds advice for its own command line ("try running Node.js with --use-system-ca").
  const reason = a.message.replace(/;.*$/s, '');
  if (UNTRUSTED.has(a.code)) return fsErrors.untrustedCert(f.endpoint, reason);
  if (CERT_CODE.test(a.code)) return fsErrors.badCert(f.endpoint, reason);
  return undefined;
}
