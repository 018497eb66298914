// Object listings (ListObjects V1 and V2) for a credential limited to key prefixes, made safe by
// construction: every listing the store sees has a prefix inside a scope, so the store never
// names anything else, and the gateway writes the client's answer itself from what came back.
//
// A request for prefix P is planned against the credential's scope prefixes S in the bucket:
//   - P inside a scope: the store lists P itself.
//   - P shorter than some scopes (the bucket's root, as s3fs and rclone list it): for each scope s
//     under P, either its whole content rolls up into one common prefix of the client's view (with
//     a delimiter in s after P: `run42/` at the root for `run42/x/`), which is shown when the
//     store holds a key under s; or (no delimiter after P) the store lists s, and the client sees
//     those keys. Scopes that are not prefixes of each other cover disjoint, ordered key ranges,
//     so the answer is those parts one after the other.
//   - P unrelated to every scope: empty, without asking the store.
// Continuation tokens (V2) and NextMarker (V1) are the gateway's own: the part reached and the
// store's token for it, sealed with a MAC and bound to the listing's bucket, prefix, delimiter and
// scopes, so no store token (Swift's is the last name listed, in base64) reaches the client and no
// client-made token reaches the store.
//
// The store is asked with encoding-type=url; its names are decoded when its answer says it encoded
// them (Swift does, s3rver ignores the parameter), and encoded for the client when it asked.
// Pure but for the `fetchPage` callback the endpoint gives.

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { xmlEscape } from '../http/xml.ts';
import { unescapeXml } from './route.ts';
import { upstreamKey } from './scope.ts';
import { uriEncode } from '../../lib/sigv4.ts';

/** S3's own ceiling for one page; larger max-keys are answered with 1000, as S3 does. */
export const MAX_KEYS = 1000;
const TOKEN_PREFIX = 'estl1';

export type Part = { readonly kind: 'rollup'; readonly prefix: string; readonly scopes: readonly string[] } | { readonly kind: 'list'; readonly prefix: string };

/** The store listings that answer prefix P with delimiter D for a credential with `scopes`. */
export function planListing(prefix: string, delimiter: string, scopes: readonly string[]): Part[] {
  if (scopes.some((s) => prefix.startsWith(s))) return [{ kind: 'list', prefix }];
  const under = [...new Set(scopes.filter((s) => s.startsWith(prefix)))].sort();
  // A scope inside another lists nothing the outer one does not.
  const outer = under.filter((s) => !under.some((o) => o !== s && s.startsWith(o)));
  const parts: Part[] = [];
  for (const s of outer) {
    const rest = s.slice(prefix.length);
    const at = delimiter === '' ? -1 : rest.indexOf(delimiter);
    if (at === -1) {
      parts.push({ kind: 'list', prefix: s });
      continue;
    }
    const cp = prefix + rest.slice(0, at + delimiter.length);
    const last = parts.at(-1);
    if (last?.kind === 'rollup' && last.prefix === cp) parts[parts.length - 1] = { ...last, scopes: [...last.scopes, s] };
    else parts.push({ kind: 'rollup', prefix: cp, scopes: [s] });
  }
  return parts;
}

/** Where a listing goes on: the part reached and the store's continuation token in it. */
export interface Position {
  readonly part: number;
  readonly store?: string;
}

/** What a sealed token is bound to, so a token of one listing cannot steer another. */
export function bindingOf(bucket: string, prefix: string, delimiter: string, scopes: readonly string[]): string {
  return createHash('sha256').update(JSON.stringify([bucket, prefix, delimiter, [...scopes].sort()])).digest('base64url').slice(0, 16);
}

function tokenMac(issuerKey: string, payload: string): string {
  const key = createHmac('sha256', issuerKey).update('estuary listing tokens').digest();
  return createHmac('sha256', key).update(payload).digest('base64url').slice(0, 22);
}

export function sealPosition(issuerKey: string, binding: string, pos: Position): string {
  const payload = Buffer.from(JSON.stringify({ b: binding, p: pos.part, s: pos.store })).toString('base64url');
  return `${TOKEN_PREFIX}.${payload}.${tokenMac(issuerKey, payload)}`;
}

/** The position a token seals, or undefined when it is not one this gateway made for this listing. */
export function unsealPosition(issuerKey: string, binding: string, token: string): Position | undefined {
  const m = /^estl1\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{22})$/.exec(token);
  if (!m) return undefined;
  const want = Buffer.from(tokenMac(issuerKey, m[1]!));
  const got = Buffer.from(m[2]!);
  if (want.length !== got.length || !timingSafeEqual(want, got)) return undefined;
  try {
    const o = JSON.parse(Buffer.from(m[1]!, 'base64url').toString('utf8')) as { b?: unknown; p?: unknown; s?: unknown };
    if (o.b !== binding || !Number.isInteger(o.p) || (o.s !== undefined && typeof o.s !== 'string')) return undefined;
    return { part: o.p as number, store: o.s as string | undefined };
  } catch {
    return undefined;
  }
}

export interface StorePage {
  readonly truncated: boolean;
  readonly next?: string;
  /** Each object's key and the rest of its <Contents> element, as the store wrote it. */
  readonly contents: readonly { readonly key: string; readonly rest: string }[];
  readonly prefixes: readonly string[];
}

function decodeName(text: string, encoded: boolean): string {
  const s = unescapeXml(text);
  if (!encoded) return s;
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

/** A ListObjectsV2 answer of the store, names decoded; undefined when it is not one. */
export function parseStorePage(xml: string): StorePage | undefined {
  if (!/<ListBucketResult[\s>]/.test(xml)) return undefined;
  const encoded = /<EncodingType>url<\/EncodingType>/.test(xml);
  const contents = [...xml.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)].map((m) => {
    const k = /<Key>([^<]*)<\/Key>/.exec(m[1]!);
    return { key: decodeName(k?.[1] ?? '', encoded), rest: m[1]!.replace(/<Key>[^<]*<\/Key>/, '') };
  });
  const prefixes = [...xml.matchAll(/<CommonPrefixes>\s*<Prefix>([^<]*)<\/Prefix>\s*<\/CommonPrefixes>/g)].map((m) => decodeName(m[1]!, encoded));
  const truncated = /<IsTruncated>true<\/IsTruncated>/.test(xml);
  const next = /<NextContinuationToken>([^<]+)<\/NextContinuationToken>/.exec(xml)?.[1];
  return { truncated, next: next === undefined ? undefined : unescapeXml(next), contents, prefixes };
}

/** The query of one store listing (always V2, url-encoded names asked for). */
export function storeQuery(
  prefix: string,
  o: { delimiter?: string; maxKeys: number; token?: string; startAfter?: string; fetchOwner?: boolean },
): string {
  const q = [`list-type=2`, `prefix=${uriEncode(prefix)}`, `max-keys=${o.maxKeys}`, 'encoding-type=url'];
  if (o.delimiter) q.push(`delimiter=${uriEncode(o.delimiter)}`);
  if (o.token !== undefined) q.push(`continuation-token=${uriEncode(o.token)}`);
  else if (o.startAfter !== undefined) q.push(`start-after=${uriEncode(o.startAfter)}`);
  if (o.fetchOwner) q.push('fetch-owner=true');
  return q.join('&');
}

/** What the client asked, as the answer echoes it. */
export interface ClientListing {
  readonly bucket: string;
  readonly version: 1 | 2;
  readonly prefix: string;
  readonly delimiter: string;
  readonly maxKeys: number;
  readonly encodeUrl: boolean;
  readonly startAfter?: string;
  readonly continuationToken?: string;
  readonly marker?: string;
}

export interface Gathered {
  readonly contents: readonly { readonly key: string; readonly rest: string }[];
  readonly prefixes: readonly string[];
  /** The sealed token to go on with, when the listing is truncated. */
  readonly next?: string;
}

/** The ListBucketResult the client gets. */
export function buildAnswer(c: ClientListing, g: Gathered): string {
  const name = (s: string) => xmlEscape(c.encodeUrl ? upstreamKey(s) : s);
  const el = (tag: string, v: string | undefined) => (v === undefined ? '' : `<${tag}>${v}</${tag}>`);
  const head = [el('Name', xmlEscape(c.bucket)), el('Prefix', name(c.prefix))];
  if (c.version === 2) {
    head.push(el('StartAfter', c.startAfter === undefined ? undefined : name(c.startAfter)));
    head.push(el('ContinuationToken', c.continuationToken === undefined ? undefined : xmlEscape(c.continuationToken)));
    head.push(el('KeyCount', String(g.contents.length + g.prefixes.length)));
  } else {
    head.push(el('Marker', name(c.marker ?? '')));
  }
  head.push(el('MaxKeys', String(c.maxKeys)));
  if (c.delimiter !== '') head.push(el('Delimiter', name(c.delimiter)));
  if (c.encodeUrl) head.push(el('EncodingType', 'url'));
  head.push(el('IsTruncated', String(g.next !== undefined)));
  if (g.next !== undefined) head.push(el(c.version === 2 ? 'NextContinuationToken' : 'NextMarker', g.next));
  const contents = g.contents.map((o) => `<Contents><Key>${name(o.key)}</Key>${o.rest}</Contents>`);
  const prefixes = g.prefixes.map((p) => `<CommonPrefixes><Prefix>${name(p)}</Prefix></CommonPrefixes>`);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${head.join('')}${contents.join('')}${prefixes.join('')}</ListBucketResult>`;
}
