// Listing plans, sealed tokens and the scoped listing run against an in-memory store, without a
// network: the store double answers ListObjectsV2 for any prefix and records what it was asked.

import { describe, expect, it } from 'vitest';
import { bindingOf, parseStorePage, planListing, sealPosition, unsealPosition } from '../../../gateway/s3/list-scope.ts';
import { runScopedListing } from '../../../gateway/s3/scoped-listing.ts';

const KEY = 'unit-issuer-key-0123456789abcdef0123456789';

describe('listing plans', () => {
  it('lists a prefix inside a scope as it is', () => {
    expect(planListing('run42/x', '/', ['run42/'])).toEqual([{ kind: 'list', prefix: 'run42/x' }]);
  });
  it('rolls a scope up into the common prefix the client sees, or lists the scope', () => {
    expect(planListing('', '/', ['run42/'])).toEqual([{ kind: 'rollup', prefix: 'run42/', scopes: ['run42/'] }]);
    expect(planListing('', '', ['run42/'])).toEqual([{ kind: 'list', prefix: 'run42/' }]);
    expect(planListing('a/', '/', ['a/x/', 'a/y/', 'b/', 'a/x/deeper/'])).toEqual([
      { kind: 'rollup', prefix: 'a/x/', scopes: ['a/x/'] },
      { kind: 'rollup', prefix: 'a/y/', scopes: ['a/y/'] },
    ]);
    expect(planListing('', '/', ['a/x/', 'a/y/', 'b'])).toEqual([
      { kind: 'rollup', prefix: 'a/', scopes: ['a/x/', 'a/y/'] },
      { kind: 'list', prefix: 'b' },
    ]);
    expect(planListing('zzz', '/', ['run42/'])).toEqual([]);
  });
});

describe('sealed positions', () => {
  it('round-trip for the listing they were made for only', () => {
    const b = bindingOf('kek-data', '', '/', ['run42/']);
    const t = sealPosition(KEY, b, { part: 1, store: 'c2VjcmV0' });
    expect(unsealPosition(KEY, b, t)).toEqual({ part: 1, store: 'c2VjcmV0' });
    expect(unsealPosition(KEY, bindingOf('kek-data', 'run42/', '/', ['run42/']), t)).toBeUndefined();
    expect(unsealPosition('another-key-0123456789abcdef0123456789', b, t)).toBeUndefined();
    expect(unsealPosition(KEY, b, t.slice(0, -1) + (t.endsWith('A') ? 'B' : 'A'))).toBeUndefined();
    expect(Buffer.from(t.split('.')[1]!, 'base64url').toString()).not.toMatch(/secret/);
  });
});

describe('store pages', () => {
  it('decodes names only when the answer says they were encoded', () => {
    const page = (enc: boolean) =>
      `<ListBucketResult>${enc ? '<EncodingType>url</EncodingType>' : ''}<IsTruncated>true</IsTruncated><NextContinuationToken>t&amp;1</NextContinuationToken><Contents><Key>a%2Fb+c</Key><Size>1</Size></Contents><CommonPrefixes><Prefix>d%20/</Prefix></CommonPrefixes></ListBucketResult>`;
    expect(parseStorePage(page(true))).toEqual({ truncated: true, next: 't&1', contents: [{ key: 'a/b c', rest: '<Size>1</Size>' }], prefixes: ['d /'] });
    expect(parseStorePage(page(false))?.contents[0]?.key).toBe('a%2Fb+c');
  });
});

describe('a scoped listing against an in-memory store', () => {
  const keys = ['aaa', 'run42/a', 'run42/b', 'run42/c/d', 'run420/x', 'secret'].sort();
  const asked: URLSearchParams[] = [];
  // A store that pages by start-after (its continuation token is the last key, as Swift's is).
  const fetchPage = async (query: string) => {
    const q = new URLSearchParams(query);
    asked.push(q);
    const prefix = q.get('prefix') ?? '';
    const after = q.get('continuation-token') ?? q.get('start-after') ?? '';
    const max = Number(q.get('max-keys'));
    const hits = keys.filter((k) => k.startsWith(prefix) && k > after);
    const page = hits.slice(0, max);
    const more = hits.length > max;
    const xml = `<ListBucketResult><IsTruncated>${more}</IsTruncated>${more ? `<NextContinuationToken>${page.at(-1)}</NextContinuationToken>` : ''}${page.map((k) => `<Contents><Key>${k}</Key></Contents>`).join('')}</ListBucketResult>`;
    return { status: 200, body: Buffer.from(xml) };
  };
  const run = (q: Record<string, string>) => runScopedListing('kek-data', new Map(Object.entries(q)), ['run42/'], KEY, fetchPage);

  it('pages a root listing one key at a time, asking the store only inside the scope', async () => {
    const seen: string[] = [];
    let token: string | undefined;
    for (let i = 0; i < 10; i++) {
      const r = await run({ 'list-type': '2', 'max-keys': '1', ...(token ? { 'continuation-token': token } : {}) });
      if (r.kind !== 'answer') throw new Error(JSON.stringify(r));
      seen.push(...[...r.xml.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]!));
      token = /<NextContinuationToken>([^<]*)</.exec(r.xml)?.[1];
      expect(r.xml).not.toMatch(/secret|run420|aaa/);
      if (!token) break;
    }
    expect(seen).toEqual(['run42/a', 'run42/b', 'run42/c/d']);
    expect(asked.every((q) => (q.get('prefix') ?? '').startsWith('run42/'))).toBe(true);
  });

  it('refuses a token it did not make, and a bad max-keys', async () => {
    expect((await run({ 'list-type': '2', 'continuation-token': 'cnVuNDIvYg==' })).kind).toBe('invalid');
    expect((await run({ 'list-type': '2', 'max-keys': '-1' })).kind).toBe('invalid');
  });
});
