// The preconditions of a GET or HEAD evaluated against a response the cache holds or has just
// fetched (RFC 9110 §13.2.2, steps 1, 2 and 5; the 304 steps are hit.ts's notModified). A cache
// that answered If-Match or If-Unmodified-Since without looking at them would hand a client that
// reads one object in several requests (boto3's download_file: If-Match on every range; curl -C:
// If-Range) the parts of two versions. Pure.

import { first, type HeaderMap, httpDate, joined } from './headers.ts';

export type FailedCondition = 'If-Match' | 'If-Unmodified-Since';

/**
 * The entity tags of an If-Match or If-None-Match value (RFC 9110 §13.1.1), `*` included: a comma
 * inside a quoted tag belongs to the tag; a tag sent without its quotes, as S3 and MinIO accept,
 * is read as the quoted one. An empty value has none.
 */
export function entityTags(v: string | string[] | undefined): string[] {
  const text = joined(v) ?? '';
  const tags: string[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === ',' || c === ' ' || c === '\t') {
      i++;
      continue;
    }
    const weak = text.startsWith('W/"', i);
    const open = weak ? i + 2 : i;
    if (text[open] === '"') {
      const close = text.indexOf('"', open + 1);
      const end = close < 0 ? text.length : close + 1;
      tags.push(text.slice(i, end) + (close < 0 ? '"' : ''));
      i = end;
      continue;
    }
    const comma = text.indexOf(',', i);
    const token = text.slice(i, comma < 0 ? text.length : comma).trim();
    i = comma < 0 ? text.length : comma;
    tags.push(token === '*' ? '*' : `"${token}"`);
  }
  return tags;
}

/** The response's own ETag, read as entityTags reads a tag (quotes added where a store left them off). */
export function etagOf(headers: HeaderMap): string | undefined {
  const value = first(headers.etag);
  return value === undefined ? undefined : entityTags(value)[0];
}

/** Whether an If-Match value holds for a response tagged `etag` (strong comparison); none holds too. */
export function ifMatchHolds(value: string | string[] | undefined, etag: string | undefined): boolean {
  // An empty value is no condition; one of only commas names no tag, and so none matches (as MinIO).
  if ((joined(value) ?? '').trim() === '') return true;
  const tags = entityTags(value);
  const own = etag === undefined ? undefined : entityTags(etag)[0];
  return tags.some((t) => t === '*' || (own !== undefined && strongEqual(t, own)));
}

/** Strong comparison (RFC 9110 §8.8.3.2): both tags strong and identical. */
function strongEqual(a: string, b: string): boolean {
  return a === b && !a.startsWith('W/');
}

/**
 * The precondition a response fails, or undefined when they hold. Only a 200 has a selected
 * representation to compare with; If-Unmodified-Since is ignored beside If-Match (as by S3), when
 * it is not a valid date, or when the response has no Last-Modified.
 */
export function failedPrecondition(req: HeaderMap, status: number, headers: HeaderMap): FailedCondition | undefined {
  if (status !== 200) return undefined;
  // An empty If-Match is no condition (as S3 and MinIO take it).
  if ((joined(req['if-match']) ?? '').trim() !== '') return ifMatchHolds(req['if-match'], etagOf(headers)) ? undefined : 'If-Match';
  const since = httpDate(req['if-unmodified-since']);
  if (since === undefined) return undefined;
  const modified = httpDate(headers['last-modified']);
  return modified !== undefined && modified > since ? 'If-Unmodified-Since' : undefined;
}

/**
 * Whether a Range is to be honoured: no If-Range, or one naming this version, by a strong ETag or
 * by exactly its Last-Modified date (RFC 9110 §13.1.5). Otherwise the whole body is the answer.
 */
export function ifRangeHolds(req: HeaderMap, headers: HeaderMap): boolean {
  const value = first(req['if-range'])?.trim();
  if (value === undefined) return true;
  if (value.startsWith('"') || value.startsWith('W/')) {
    const etag = etagOf(headers);
    return etag !== undefined && strongEqual(value, etag);
  }
  const date = httpDate(value);
  if (date !== undefined) return date === httpDate(headers['last-modified']);
  // Neither a quoted tag nor a date: a tag sent without its quotes, as S3 and MinIO accept it.
  const etag = etagOf(headers);
  return etag !== undefined && strongEqual(`"${value}"`, etag);
}
