// What S3's XML answers to the control calls say, as the ObjectClient's types, and the XML the
// calls send. Pure: no I/O. A reply whose root is not the one the call answers with is refused,
// and so are numbers that are not numbers: a listing that cannot be read whole is an error, never
// a shorter listing.

import { createHash } from 'node:crypto';
import { type CompletedPart, type ListPage, ObjectError, type PendingUpload } from './object-client.ts';
import { childrenNamed, childText, escapeText, parseXml, type XmlElement } from './xml.ts';
import { listedKey } from './url-keys.ts';

export const stripQuotes = (etag: string | undefined): string => (etag ?? '').replace(/"/g, '');

/** An answer's error as the SDK threw it: toObjectError and the retry rules read these fields. */
export class S3ReplyError extends Error {
  readonly $metadata: { httpStatusCode: number };
  /** The region the store names for the bucket, in a 301 or a 400 answer (http-exchange.ts). */
  bucketRegion?: string;
  /** The answer's Date moved the signing clock: tried again, as the AWS SDK does. */
  clockSkewCorrected?: boolean;

  constructor(status: number, code: string | undefined, message: string | undefined) {
    super(message ?? `HTTP ${status}`);
    this.name = code ?? (status === 404 ? 'NotFound' : `Http${status}`);
    this.$metadata = { httpStatusCode: status };
  }
}

/** The Code and Message of an `<Error>` body; what cannot be read as XML names no code. */
export function errorOf(status: number, body: string): S3ReplyError {
  let root: XmlElement | undefined;
  try {
    root = parseXml(body);
  } catch {
    root = undefined;
  }
  if (root?.name !== 'Error') return new S3ReplyError(status, undefined, undefined);
  return new S3ReplyError(status, childText(root, 'Code'), childText(root, 'Message'));
}

/**
 * The root of a success's body, which must be `<root>`. An `<Error>` in a 200 (S3 sends one when
 * a CopyObject or CompleteMultipartUpload fails after its headers went out) and an empty body
 * where one was due are thrown as a 503, as the AWS SDK does, so they are retried.
 */
export function replyRoot(body: string, root: string): XmlElement {
  if (body.trim() === '') throw new S3ReplyError(503, 'InternalError', `empty answer where <${root}> was due`);
  const el = parseXml(body);
  if (el.name === 'Error') {
    throw new S3ReplyError(503, childText(el, 'Code') ?? 'InternalError', childText(el, 'Message'));
  }
  if (el.name !== root) throw new ObjectError('other', `answer is <${el.name.slice(0, 40)}>, not <${root}>`);
  return el;
}

/** A size the answer must carry: a missing one is refused, not read as 0 (an empty file). */
function count(el: XmlElement, name: string): number {
  const text = childText(el, name);
  if (text === undefined) throw new ObjectError('other', `a listing entry without <${name}>`);
  const n = Number(text);
  if (!/^\s*\d{1,16}\s*$/.test(text) || !Number.isSafeInteger(n))
    throw new ObjectError('other', `<${name}> in the answer is ${JSON.stringify(text.slice(0, 40))}, not a size`);
  return n;
}

function date(el: XmlElement, name: string): Date {
  const d = new Date(childText(el, name) ?? 0);
  return Number.isNaN(d.getTime()) ? new Date(0) : d;
}

/**
 * IsTruncated: `true` or `false` in any case (around white space), undefined when absent; anything
 * else is refused, as the AWS SDK's parseBoolean refuses it, rather than read as false (a listing
 * that silently ends after its first page).
 */
function truncatedFlag(el: XmlElement): boolean | undefined {
  const text = childText(el, 'IsTruncated');
  if (text === undefined) return undefined;
  const word = text.trim().toLowerCase();
  if (word === 'true' || word === 'false') return word === 'true';
  throw new ObjectError('other', `<IsTruncated> in the answer is ${JSON.stringify(text.slice(0, 40))}, not true or false`);
}

/** ListObjectsV2's page; keys decoded when the server says it encoded them (url-keys.ts). */
export function listPage(body: string): ListPage {
  const root = replyRoot(body, 'ListBucketResult');
  const encoding = childText(root, 'EncodingType');
  const decode = (k: string | undefined) => listedKey(k ?? '', encoding);
  const next = childText(root, 'NextContinuationToken');
  // Without IsTruncated, a token means more pages: the SDK's paginator goes on while there is one.
  const truncated = truncatedFlag(root) ?? Boolean(next);
  if (truncated && !next) throw new ObjectError('other', 'a truncated listing without a continuation token');
  return {
    objects: childrenNamed(root, 'Contents').map((o) => ({
      key: decode(childText(o, 'Key')),
      size: count(o, 'Size'),
      etag: stripQuotes(childText(o, 'ETag')),
      lastModified: date(o, 'LastModified'),
    })),
    prefixes: childrenNamed(root, 'CommonPrefixes').map((p) => decode(childText(p, 'Prefix'))),
    nextToken: truncated ? next : undefined,
  };
}

export interface UploadsPage {
  readonly uploads: PendingUpload[];
  /** Where the next page starts, when there is one. */
  readonly next?: { keyMarker: string; uploadIdMarker: string | undefined };
}

export function uploadsPage(body: string): UploadsPage {
  const root = replyRoot(body, 'ListMultipartUploadsResult');
  const encoding = childText(root, 'EncodingType');
  const uploads: PendingUpload[] = [];
  for (const u of childrenNamed(root, 'Upload')) {
    const key = childText(u, 'Key');
    const uploadId = childText(u, 'UploadId');
    if (key && uploadId) uploads.push({ key: listedKey(key, encoding), uploadId, initiated: date(u, 'Initiated') });
  }
  const keyMarker = childText(root, 'NextKeyMarker');
  if (!(truncatedFlag(root) ?? Boolean(keyMarker))) return { uploads };
  // The next page starts after NextKeyMarker: without one it would be this page again.
  if (!keyMarker) throw new ObjectError('other', 'a truncated upload listing without a NextKeyMarker');
  return {
    uploads,
    next: {
      keyMarker: listedKey(keyMarker, encoding),
      uploadIdMarker: childText(root, 'NextUploadIdMarker'),
    },
  };
}

/** The first key DeleteObjects could not delete, with the server's reason. */
export function firstDeleteError(body: string): { key: string; message: string } | undefined {
  const failed = childrenNamed(replyRoot(body, 'DeleteResult'), 'Error')[0];
  if (!failed) return undefined;
  return { key: childText(failed, 'Key') ?? '', message: childText(failed, 'Message') ?? childText(failed, 'Code') ?? '' };
}

/** The ETag of a CopyObjectResult, CopyPartResult or CompleteMultipartUploadResult. */
export function etagOf(body: string, root: string): string {
  return stripQuotes(childText(replyRoot(body, root), 'ETag'));
}

export function uploadIdOf(body: string): string {
  const id = childText(replyRoot(body, 'InitiateMultipartUploadResult'), 'UploadId');
  if (!id) throw new ObjectError('other', 'CreateMultipartUpload returned no UploadId');
  return id;
}

/**
 * The ETag S3 gives the object these parts complete: the MD5 of the parts' MD5s, then `-` and
 * their count. Undefined when a part's ETag is not an MD5 (SSE-KMS, some compatible servers).
 */
export function multipartEtag(parts: readonly CompletedPart[]): string | undefined {
  if (parts.length === 0 || !parts.every((p) => /^[0-9a-f]{32}$/i.test(p.etag))) return undefined;
  const md5 = createHash('md5');
  for (const p of [...parts].sort((a, b) => a.partNumber - b.partNumber)) md5.update(Buffer.from(p.etag, 'hex'));
  return `${md5.digest('hex')}-${parts.length}`;
}

const NS = 'http://s3.amazonaws.com/doc/2006-03-01/';

/**
 * Whether XML 1.0 can carry the text (its Char production): not C0 controls but tab, LF and CR,
 * not U+FFFE/U+FFFF, not lone surrogates. References do not help: `&#x1;` is malformed too.
 */
export const xmlCanCarry = (text: string): boolean =>
  !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|\p{Cs}/u.test(text);

/** DeleteObjects' body; every key must pass xmlCanCarry. */
export function deleteBody(keys: readonly string[]): string {
  const objects = keys.map((k) => `<Object><Key>${escapeText(k)}</Key></Object>`).join('');
  return `<?xml version="1.0" encoding="UTF-8"?><Delete xmlns="${NS}">${objects}<Quiet>true</Quiet></Delete>`;
}

export function completeBody(parts: readonly CompletedPart[]): string {
  const list = parts
    .map((p) => `<Part><ETag>${escapeText(`"${p.etag}"`)}</ETag><PartNumber>${p.partNumber}</PartNumber></Part>`)
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?><CompleteMultipartUpload xmlns="${NS}">${list}</CompleteMultipartUpload>`;
}
