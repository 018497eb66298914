// S3 errors the gateway answers itself, in the XML shape and with the codes S3 clients branch on
// (the AWS SDKs, rclone and s3fs retry or give up by code). Nothing that produced one of these
// has reached the store.

import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { CodeDoc, DocTable } from '../../lib/errors.ts';
import { s3ErrorXml } from '../http/xml.ts';

export const S3_ERRORS = {
  AccessDenied: 403,
  InvalidAccessKeyId: 403,
  InvalidToken: 400,
  ExpiredToken: 400,
  SignatureDoesNotMatch: 403,
  RequestTimeTooSkewed: 403,
  NotImplemented: 501,
  InvalidRequest: 400,
  InvalidArgument: 400,
  MalformedXML: 400,
  EntityTooLarge: 400,
  IncompleteBody: 400,
  BadDigest: 400,
  MissingContentLength: 411,
  InvalidRange: 416,
  NoSuchKey: 404,
  ServiceUnavailable: 503,
} as const;

export type S3ErrorCode = keyof typeof S3_ERRORS;

/** The codes docs/ERRORS.md explains, with their meaning and fix, in the order listed there. */
const S3_ERROR_DOCS: { readonly [C in S3ErrorCode]?: CodeDoc } = {
  AccessDenied: {
    meaning: "the request is unsigned or presigned, has an unsigned `x-amz-*` header, names something outside the credential's scopes, or names a key, copy source or listing parameter with a `.` or `..` segment (also `%2e`, `%252e`, `\\`, Unicode lookalikes), for every credential; a listing of versions or uploads without a prefix inside the scope. In a DeleteObjects result, per key",
    fix: 'use names without dot segments (reach such objects at the store directly); name a prefix inside your scope; issue a credential for what you need',
  },
  InvalidToken: {
    meaning: "the session token was not issued by this gateway's issuer key, or its claims are malformed (such as an expiry that is not a number)",
    fix: 'issue a new credential with `estuary gateway credentials issue`',
  },
  ExpiredToken: {
    meaning: 'the credential has expired',
    fix: 'issue a new one',
  },
  InvalidArgument: {
    meaning: 'a ListObjectsV2 continuation token the gateway did not issue for this listing (another prefix or delimiter, or made by hand), a `max-keys` that is not a whole number, an `encoding-type` other than `url`',
    fix: 'start the listing again without a token; page with the tokens the answers carry',
  },
  MalformedXML: {
    meaning: 'a DeleteObjects body that is not a plain `<Delete>` of 1 to 1000 `<Object><Key>…</Key></Object>` (CDATA, comments, prefixed or unknown elements)',
    fix: 'send the body the SDKs send',
  },
  InvalidRequest: {
    meaning: 'a key or query parameter that is not valid percent-encoding, or a query parameter given twice; an `x-amz-copy-source` that is not `BUCKET/KEY` with at most `?versionId=`, or names a bucket this gateway does not serve',
    fix: 'correct the request',
  },
  NotImplemented: {
    meaning: 'bucket administration and bucket sub-resources (`?acl`, `?policy`, `?tagging`, …), chunk-signed `aws-chunked` uploads',
    fix: "not served through the gateway; use the store's own tools with the site's keys",
  },
};

/** The S3 codes' table of docs/ERRORS.md (## gateway). */
export const s3ErrorsTable: DocTable = {
  heading: 'S3 endpoint answers',
  intro:
    "The S3 endpoint answers S3 clients with S3's own error codes (an XML `<Error>` document), since that is what the SDKs, rclone and s3fs branch on; nothing that produced one of these reached the store. docs/STAGING.md has the order of the checks.",
  columns: ['S3 code (HTTP)', 'meaning', 'what to do'],
  rows: Object.entries(S3_ERROR_DOCS).map(([code, d]) => [
    `\`${code}\` (${S3_ERRORS[code as S3ErrorCode]})`,
    d.meaning,
    d.fix,
  ]),
};

export function sendS3Error(res: ServerResponse, code: S3ErrorCode, message: string, resource: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const requestId = randomBytes(8).toString('hex').toUpperCase();
  const body = s3ErrorXml(code, message, { Resource: resource, RequestId: requestId });
  res.writeHead(S3_ERRORS[code], {
    'content-type': 'application/xml',
    'content-length': Buffer.byteLength(body),
    'x-amz-request-id': requestId,
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

/** An XML answer the gateway makes itself (a DeleteObjects result, a listing within a scope). */
export function sendXml(res: ServerResponse, status: number, xml: string): void {
  const body = Buffer.from(xml);
  res.writeHead(status, {
    'content-type': 'application/xml',
    'content-length': body.length,
    'x-amz-request-id': randomBytes(8).toString('hex').toUpperCase(),
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}
