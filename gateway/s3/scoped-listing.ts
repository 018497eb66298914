// Runs a listing planned by list-scope.ts: reads the client's parameters, walks the plan's parts
// from where the client's token left off, asks the store for at most the page the client wants,
// and returns the answer to send. The only I/O is `fetchPage`, one signed ListObjectsV2 request
// to the store that the endpoint makes, so this file is tested without a network.

import {
  bindingOf,
  buildAnswer,
  type ClientListing,
  MAX_KEYS,
  type Part,
  parseStorePage,
  planListing,
  type Position,
  sealPosition,
  storeQuery,
  unsealPosition,
} from './list-scope.ts';

export type FetchPage = (query: string) => Promise<{ status: number; body: Buffer }>;

export type ListingResult =
  | { readonly kind: 'answer'; readonly xml: string }
  | { readonly kind: 'store-error'; readonly status: number; readonly body: Buffer }
  | { readonly kind: 'invalid'; readonly message: string };

interface Run {
  readonly client: ClientListing;
  readonly plan: readonly Part[];
  readonly from: Position;
  /** A key the client asked to start after (start-after, or a V1 marker that is a key). */
  readonly after?: string;
  readonly fetchOwner: boolean;
  readonly binding: string;
}

/** The client's listing parameters, or why they are not usable. */
function readRequest(bucket: string, q: ReadonlyMap<string, string>, scopes: readonly string[], issuerKey: string): Run | string {
  const version = q.get('list-type') === '2' ? 2 : 1;
  const prefix = q.get('prefix') ?? '';
  const delimiter = q.get('delimiter') ?? '';
  const rawMax = q.get('max-keys');
  if (rawMax !== undefined && !/^\d{1,9}$/.test(rawMax)) return 'max-keys must be a whole number';
  const maxKeys = Math.min(MAX_KEYS, rawMax === undefined ? MAX_KEYS : Number(rawMax));
  const encodeUrl = q.get('encoding-type') === 'url';
  if (q.has('encoding-type') && !encodeUrl) return 'encoding-type may only be url';
  const binding = bindingOf(bucket, prefix, delimiter, scopes);
  const client: ClientListing = {
    bucket, version, prefix, delimiter, maxKeys, encodeUrl,
    startAfter: version === 2 ? q.get('start-after') : undefined,
    continuationToken: version === 2 ? q.get('continuation-token') : undefined,
    marker: version === 1 ? q.get('marker') : undefined,
  };
  const base = { client, plan: planListing(prefix, delimiter, scopes), fetchOwner: version === 1 || q.get('fetch-owner') === 'true', binding };
  const token = version === 2 ? client.continuationToken : client.marker;
  const from = token === undefined ? undefined : unsealPosition(issuerKey, binding, token);
  if (version === 2 && token !== undefined && !from) return 'the continuation token provided is incorrect (not one this gateway issued for this listing)';
  if (from) return { ...base, from };
  return { ...base, from: { part: 0 }, after: version === 2 ? client.startAfter : client.marker };
}

/** Whether the store holds a key under one of `scopes` after `after`. */
async function anyKey(scopes: readonly string[], after: string | undefined, fetchPage: FetchPage): Promise<boolean | ListingResult> {
  for (const s of scopes) {
    const r = await fetchPage(storeQuery(s, { maxKeys: 1, startAfter: after !== undefined && after > s ? after : undefined }));
    if (r.status !== 200) return { kind: 'store-error', status: r.status, body: r.body };
    const page = parseStorePage(r.body.toString('utf8'));
    if (!page) return { kind: 'store-error', status: 502, body: r.body };
    if (page.contents.some((o) => o.key.startsWith(s))) return true;
  }
  return false;
}

export async function runScopedListing(
  bucket: string,
  q: ReadonlyMap<string, string>,
  scopes: readonly string[],
  issuerKey: string,
  fetchPage: FetchPage,
): Promise<ListingResult> {
  const run = readRequest(bucket, q, scopes, issuerKey);
  if (typeof run === 'string') return { kind: 'invalid', message: run };
  const { client, plan } = run;
  const contents: { key: string; rest: string }[] = [];
  const prefixes: string[] = [];
  const room = () => client.maxKeys - contents.length - prefixes.length;
  let part = run.from.part;
  let storeToken = run.from.store;
  while (part < plan.length && room() > 0) {
    const p = plan[part]!;
    if (p.kind === 'rollup') {
      const skip = run.after !== undefined && run.after >= p.prefix && !run.after.startsWith(p.prefix);
      const found = skip ? false : await anyKey(p.scopes, run.after, fetchPage);
      if (typeof found !== 'boolean') return found;
      if (found) prefixes.push(p.prefix);
      part++;
      continue;
    }
    const after = storeToken === undefined && run.after !== undefined && run.after > p.prefix ? run.after : undefined;
    const query = storeQuery(p.prefix, { delimiter: client.delimiter, maxKeys: room(), token: storeToken, startAfter: after, fetchOwner: run.fetchOwner });
    const r = await fetchPage(query);
    if (r.status !== 200) return { kind: 'store-error', status: r.status, body: r.body };
    const page = parseStorePage(r.body.toString('utf8'));
    if (!page) return { kind: 'store-error', status: 502, body: r.body };
    // A store that ignored the prefix must not widen the scope.
    contents.push(...page.contents.filter((o) => o.key.startsWith(p.prefix)));
    prefixes.push(...page.prefixes.filter((x) => x.startsWith(p.prefix)));
    if (page.truncated && page.next !== undefined) {
      storeToken = page.next;
      break;
    }
    storeToken = undefined;
    part++;
  }
  const more = part < plan.length;
  const next = more ? sealPosition(issuerKey, run.binding, { part, store: storeToken }) : undefined;
  return { kind: 'answer', xml: buildAnswer(client, { contents, prefixes, next }) };
}
