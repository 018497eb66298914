// What the endpoint probe's answer says about --endpoint, with no I/O. Only what the S3 client
// would misreport is judged here: silence or a trickle (it would wait --request-timeout ×
// --retries), a success that is not S3's XML (a web page, a health check's "OK" or an empty body
// pass its bucket check as an empty bucket), a redirect (it reports an unknown error), the scheme
// on the wrong port, and a certificate Node does not trust. Anything else (a refused connection,
// an S3 error in XML) is left to the bucket check that follows, which names it and retries what
// can be retried; a refusal in HTML is named as not S3 only if the bucket check is refused too.

import type { EstuaryError } from '../lib/errors.ts';
import { isPlainHttpAnswer, notTlsError, speaksTlsError } from '../lib/tls-mismatch.ts';
import { describeBody, isS3Answer, isS3Error, isWebPage } from './endpoint-body.ts';
import { maskUserinfo } from './endpoint-address.ts';
import { fsErrors } from './errors.ts';

export type EndpointAnswer =
  | {
      readonly kind: 'answer';
      readonly status: number;
      readonly contentType: string;
      /** The Location header, resolved against the probe's URL; '' without one. */
      readonly location: string;
      /** The first 2 KiB of the body. */
      readonly body: string;
    }
  /** The status line and headers came, the body (its first 2 KiB) not within the deadline. */
  | { readonly kind: 'partial'; readonly status: number; readonly contentType: string; readonly bytes: number }
  /** No answer within the deadline; `connected`: the connection (and TLS) was made. */
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

function answered(f: EndpointFacts, a: Extract<EndpointAnswer, { kind: 'answer' }>): EstuaryError | undefined {
  if (f.speaksTls || HTTPS_PORT_TEXT.test(a.body)) return speaksTlsError('--endpoint', f.endpoint);
  if (a.status >= 300 && a.status < 400 && a.location !== '') {
    // A plain-HTTP site that sends everyone to its https:// address.
    const there = URL.canParse(a.location) ? new URL(a.location) : undefined;
    if (there?.protocol === 'https:' && /^http:/i.test(f.endpoint) && there.hostname === new URL(f.endpoint).hostname) {
      return speaksTlsError('--endpoint', f.endpoint, there.origin);
    }
    // Anywhere else: the S3 client does not follow redirects. S3's own (a region's address, in
    // XML) are left to the bucket check.
    if (!isS3Error(a.body)) return fsErrors.redirected(f.endpoint, a.status, maskUserinfo(a.location));
  }
  // Only a success is judged: that is what the bucket check would take for an empty bucket. An
  // S3 server may hand unsigned requests to something else that refuses them in its own words
  // (Swift's s3api leaves them to Swift, which answers 412 text/html "Bad URL"); the signed
  // bucket check that follows gets the S3 answer and names any refusal.
  if (a.status >= 200 && a.status < 300 && !isS3Answer(a.body)) {
    const what = describeBody(a.body, a.contentType);
    return fsErrors.notS3(f.endpoint, `HTTP ${a.status} with ${what} where S3 answers in XML (<LocationConstraint>)`);
  }
  return undefined;
}

/** Refusals the bucket check turns into advice about the credentials or the bucket's name. */
const BLAMED = new Set([401, 403, 404]);

/**
 * What to say if the signed bucket check is refused (access denied, no such bucket) after the
 * probe was refused with a web page: a proxy's block page or a web server's 404 is not S3 speaking,
 * and the credentials or bucket name it would be blamed on were never looked at. Only both
 * together: a proxy that turns away unsigned requests in HTML in front of a real S3 server passes
 * signed ones, and mounts.
 */
export function webRefusal(f: EndpointFacts): EstuaryError | undefined {
  const a = f.answer;
  if (a.kind !== 'answer' || !BLAMED.has(a.status) || !isWebPage(a.body)) return undefined;
  return fsErrors.notS3(f.endpoint, `HTTP ${a.status} with an HTML page, where S3 refuses in XML`);
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
  if (a.kind === 'partial') {
    const type = a.contentType ? ` ${a.contentType}` : '';
    const what = `HTTP ${a.status}${type} came, but its body had not ended after ${seconds}: ${a.bytes} bytes`;
    return fsErrors.endpointSlow(f.endpoint, what);
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
