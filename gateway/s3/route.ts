// What an S3 request asks for: which served bucket (path-style `/bucket/key` or virtual-host
// `bucket.gateway/key`), which key, which operation, and what access that needs. Pure.

import { canonicalQuery, objectQueryProblem, type QueryProblem } from './object-query.ts';
import { uriEncode } from '../../lib/sigv4.ts';

export type S3Op =
  | 'get' // GetObject / HeadObject without sub-resource: cacheable
  | 'read' // other reads on an object (ranges with ?partNumber, ?versionId, ListParts): passed
  | 'list' // ListObjects(V2), ListMultipartUploads, GetBucketLocation, HeadBucket
  | 'write' // PutObject, UploadPart, multipart create/complete/abort, DeleteObject, CopyObject
  | 'delete-objects' // POST /bucket?delete
  | 'refused'; // bucket administration and anything else the gateway does not serve

export interface S3Route {
  readonly bucket: string;
  /** The key as on the wire (percent-encoded), '' for bucket-level requests. */
  readonly rawKey: string;
  readonly key: string;
  readonly op: S3Op;
  /** Key or listed prefix that the credential's scope must cover. */
  readonly scopeKey: string;
  readonly write: boolean;
  readonly query: string;
}

function decodeKey(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/** The query's parameters, decoded (`+` as space, as in a form). */
export function queryParams(query: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const p of query.split('&')) {
    if (p === '') continue;
    const i = p.indexOf('=');
    const k = decodeKey(i === -1 ? p : p.slice(0, i)) ?? '';
    m.set(k, decodeKey((i === -1 ? '' : p.slice(i + 1)).replace(/\+/g, ' ')) ?? '');
  }
  return m;
}

/**
 * Why the query cannot be read one way only, or undefined: a parameter (name or value) that is not
 * valid percent-encoding, or one given twice. Such a request is refused: its checks would read
 * one thing while the store reads another (a lenient decoder, or Go's first value where the
 * checks saw the last).
 */
export function queryProblem(query: string): string | undefined {
  const seen = new Set<string>();
  for (const p of query.split('&')) {
    if (p === '') continue;
    const i = p.indexOf('=');
    const raw = i === -1 ? p : p.slice(0, i);
    const name = decodeKey(raw);
    if (name === undefined || (i !== -1 && decodeKey(p.slice(i + 1).replace(/\+/g, ' ')) === undefined)) {
      return `the query parameter ${name ?? raw} is not valid percent-encoding: write a literal % as %25`;
    }
    if (seen.has(name)) return `the query parameter ${name} is given more than once`;
    seen.add(name);
  }
  return undefined;
}

/** The served bucket a request addresses, or undefined when it is not an S3 request for us. */
export function bucketOf(
  path: string,
  host: string | undefined,
  buckets: ReadonlySet<string>,
): { bucket: string; rest: string } | undefined {
  const hostname = (host ?? '').replace(/:\d+$/, '').toLowerCase();
  const dot = hostname.indexOf('.');
  if (dot > 0 && buckets.has(hostname.slice(0, dot))) return { bucket: hostname.slice(0, dot), rest: path.slice(1) };
  const m = /^\/([^/?]+)(?:\/(.*))?$/.exec(path);
  if (!m || !buckets.has(m[1]!)) return undefined;
  return { bucket: m[1]!, rest: m[2] ?? '' };
}

/** Query parameters of ListObjects (V1, V2), ListObjectVersions, ListMultipartUploads, GetBucketLocation. */
const LISTING_PARAMS = new Set([
  'list-type', 'prefix', 'delimiter', 'max-keys', 'encoding-type', 'marker', 'continuation-token', 'start-after',
  'fetch-owner', 'versions', 'key-marker', 'version-id-marker', 'uploads', 'upload-id-marker', 'max-uploads',
  'location', 'x-id', 'optional-object-attributes',
]);

export function routeS3(
  method: string,
  bucket: string,
  rawKey: string,
  query: string,
): S3Route | { readonly error: string; readonly code?: QueryProblem['code'] } {
  const key = decodeKey(rawKey);
  if (key === undefined) return { error: 'the object key is not valid percent-encoding' };
  const badQuery = queryProblem(query);
  if (badQuery !== undefined) return { error: badQuery };
  const q = queryParams(query);
  const base = { bucket, rawKey, key, query };
  const route = (op: S3Op, scopeKey: string, write: boolean): S3Route => ({ ...base, op, scopeKey, write });
  if (rawKey === '') {
    // Bucket sub-resources other than the listings (?acl, ?policy, ?tagging, …) are administration.
    const listing = [...q.keys()].every((k) => LISTING_PARAMS.has(k));
    if ((method === 'GET' || method === 'HEAD') && listing) return route('list', q.get('prefix') ?? '', false);
    if (method === 'POST' && q.has('delete')) return route('delete-objects', '', true);
    return route('refused', '', true);
  }
  // An object request's query goes to the store only as checked (object-query.ts).
  const problem = objectQueryProblem(method, q);
  if (problem) return { error: problem.message, code: problem.code };
  const object = (op: S3Op, write: boolean): S3Route => ({ ...base, query: canonicalQuery(q), op, scopeKey: key, write });
  switch (method) {
    case 'GET':
    case 'HEAD':
      // The SDKs add ?x-id=GetObject; only that leaves a read plain enough for the cache.
      return object([...q.keys()].every((k) => k === 'x-id') ? 'get' : 'read', false);
    case 'PUT':
    case 'POST':
    case 'DELETE':
      return object('write', true);
    default:
      return route('refused', key, true);
  }
}

/** `x-amz-copy-source: /bucket/key` or `bucket/key` (key percent-encoded), optional `?versionId=`. */
export function parseCopySource(v: string): { bucket: string; rawKey: string; key: string; suffix: string } | undefined {
  const m = /^\/?([^/]+)\/([^?]+)(\?.*)?$/.exec(v.trim());
  if (!m) return undefined;
  const key = decodeKey(m[2]!);
  // Only a version may follow the key: anything else would reach the store unchecked.
  const version = m[3] === undefined ? undefined : /^\?versionId=([^&]*)$/.exec(m[3])?.[1];
  if (key === undefined || (m[3] !== undefined && version === undefined)) return undefined;
  const suffix = version === undefined ? '' : `?versionId=${uriEncode(decodeKey(version) ?? version)}`;
  return { bucket: decodeKey(m[1]!) ?? m[1]!, rawKey: m[2]!, key, suffix };
}

/** Keys and sizes of a ListObjectsV2 answer, in order. */
export function xmlObjects(xml: string): { key: string; size: number }[] {
  return [...xml.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)].map((m) => ({
    key: unescapeXml(/<Key>([^<]*)<\/Key>/.exec(m[1]!)?.[1] ?? ''),
    size: Number(/<Size>(\d+)<\/Size>/.exec(m[1]!)?.[1] ?? 0),
  }));
}

/** Text of an XML element as S3 writes it, entities resolved. */
export function unescapeXml(s: string): string {
  return s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&amp;/g, '&');
}

/** The continuation token of a truncated ListObjectsV2 answer, if any. */
export function nextToken(xml: string): string | undefined {
  if (!/<IsTruncated>true<\/IsTruncated>/.test(xml)) return undefined;
  return /<NextContinuationToken>([^<]+)<\/NextContinuationToken>/.exec(xml)?.[1]?.replace(/&amp;/g, '&');
}
