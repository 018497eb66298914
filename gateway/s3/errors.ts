// S3 errors the gateway answers itself, in the XML shape and with the codes S3 clients branch on
// (the AWS SDKs, rclone and s3fs retry or give up by code). Nothing that produced one of these
// has reached the store.

import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';

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

function xmlEscape(s: string): string {
  return s.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function sendS3Error(res: ServerResponse, code: S3ErrorCode, message: string, resource: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const requestId = randomBytes(8).toString('hex').toUpperCase();
  const body =
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<Error><Code>${code}</Code><Message>${xmlEscape(message)}</Message>` +
    `<Resource>${xmlEscape(resource)}</Resource><RequestId>${requestId}</RequestId></Error>`;
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
