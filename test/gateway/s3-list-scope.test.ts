// Listings through a prefix credential: every listing the store sees is inside the scope (checked
// at a relay in front of the store), no answer names anything outside it, continuation tokens and
// markers are the gateway's own, and encoding-type=url means the same on every store. Against
// s3rver (ignores encoding-type, opaque tokens) and Swift (honours it, tokens are base64 names).

import { ListObjectsV2Command, paginateListObjectsV2, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { issue } from '../../gateway/s3/credentials.ts';
import { runTeardowns } from '../helpers/cleanup.ts';
import { type CountingProxy, startCountingProxy } from '../helpers/counting-proxy.ts';
import { type S3Server, startS3rver } from '../helpers/s3rver.ts';
import { startSwift, swiftAvailable } from '../helpers/swift.ts';
import { BUCKET, gatewayOn, ISSUER, signed } from './helpers/s3-scope.ts';

afterAll(runTeardowns);

const stores: [string, () => Promise<S3Server>, boolean][] = [
  ['s3rver', () => startS3rver({ buckets: [BUCKET] }), true],
  ['Swift', () => startSwift({ buckets: [BUCKET] }), (await swiftAvailable()).ok],
];

const IN = ['run42/a', 'run42/b', 'run42/sub/c', 'run42/sub/d', 'run42/p%2Fq'];
// run42%2Fliteral is one segment: outside run42/, whatever a decoder makes of it.
const OUT = ['run420/x', 'run42-/y', 'run42.txt', 'run42%2Fliteral', 'secret', 'secret/z', 'aaa', 'zzz'];
const OUT_WORDS = ['run420', 'run42-', 'run42.txt', 'literal', 'secret', 'aaa', 'zzz'];

/** Every listing the relay saw, as [prefix] decoded; the store must never be asked outside run42/. */
function listedPrefixes(relay: CountingProxy, from: number): string[] {
  return relay.seen
    .slice(from)
    .filter((s) => s.method === 'GET' && s.path.startsWith(`/${BUCKET}?`))
    .map((s) => new URLSearchParams(s.path.split('?')[1]).get('prefix') ?? '');
}

const tag = (xml: string, t: string) => [...xml.matchAll(new RegExp(`<${t}>([^<]*)</${t}>`, 'g'))].map((m) => m[1]!);

for (const [name, start, available] of stores) {
  describe.runIf(available)(`listings within a scope (${name})`, async () => {
    const store = await start();
    const relay = await startCountingProxy(store.endpoint);
    const gw = await gatewayOn(relay.url, store);
    for (const k of [...IN, ...OUT]) {
      const r = await signed(store.endpoint, store, 'PUT', `/${BUCKET}/${k.split('/').map(encodeURIComponent).join('/')}`, { body: k });
      expect(r.status, k).toBe(200);
    }
    const c = issue(ISSUER, [{ bucket: BUCKET, prefix: 'run42/', write: false }], 3_600_000, Date.now());
    const cred = { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey, sessionToken: c.sessionToken };
    const list = async (query: string) => {
      const from = relay.seen.length;
      const r = await signed(gw.url, cred, 'GET', `/${BUCKET}?${query}`);
      const xml = r.body.toString();
      expect(r.status, `${query}: ${xml}`).toBe(200);
      // What the client sent is echoed, and the next continuation token is the gateway's sealed,
      // random-looking text (it can spell anything by chance); everything else must be inside the scope
      // (Once each: a delimited listing's <CommonPrefixes><Prefix> are listed names, checked.)
      const answered = ['Prefix', 'StartAfter', 'Marker', 'ContinuationToken', 'NextContinuationToken'].reduce(
        (text, tag) => text.replace(new RegExp(`<${tag}>[^<]*</${tag}>`), ''),
        xml,
      );
      for (const w of OUT_WORDS) expect(answered, `${query} named ${w}`).not.toContain(w);
      for (const p of listedPrefixes(relay, from)) expect(p.startsWith('run42/'), `${query} listed ${p} at the store`).toBe(true);
      return xml;
    };
    /** Every key (and common prefix) of a listing, page by page with max-keys=1. */
    const walk = async (query: string, v: 1 | 2) => {
      const names: string[] = [];
      let next: string | undefined;
      for (let i = 0; i < 20; i++) {
        // As clients page: the next marker replaces the one the walk started after.
        const q = new URLSearchParams(query);
        q.set('max-keys', '1');
        if (next !== undefined) q.set(v === 2 ? 'continuation-token' : 'marker', next);
        const xml = await list(q.toString());
        names.push(...tag(xml, 'Key'), ...tag(xml, 'Prefix').slice(1));
        next = tag(xml, v === 2 ? 'NextContinuationToken' : 'NextMarker')[0];
        if (tag(xml, 'IsTruncated')[0] !== 'true') return names;
        expect(next, xml).toMatch(/^estl1\./);
      }
      throw new Error('the listing did not end');
    };

    it('shows the scope as a common prefix of the bucket root, and nothing else', async () => {
      for (const q of ['list-type=2&delimiter=/', 'delimiter=/', 'list-type=2&delimiter=/&prefix=run4', 'list-type=2&delimiter=/&prefix=run42']) {
        const xml = await list(q);
        expect(tag(xml, 'Prefix').slice(1), q).toEqual(['run42/']);
        expect(tag(xml, 'Key'), q).toEqual([]);
      }
      expect(tag(await list('list-type=2&delimiter=/&prefix=secret/'), 'Key')).toEqual([]);
      expect(tag(await list('list-type=2&prefix=zzz'), 'Key')).toEqual([]);
    });

    it('walks flat and delimited listings page by page, from the root and within the scope', async () => {
      const all = [...IN].sort();
      expect(await walk('list-type=2', 2)).toEqual(all);
      expect(await walk('list-type=2&prefix=run', 2)).toEqual(all);
      expect(await walk('', 1)).toEqual(all);
      expect(await walk('list-type=2&prefix=run42/', 2)).toEqual(all);
      expect(await walk('prefix=run42/', 1)).toEqual(all);
      expect(await walk('list-type=2&prefix=run42/&delimiter=/', 2)).toEqual(['run42/a', 'run42/b', 'run42/p%2Fq', 'run42/sub/']);
      expect(await walk('list-type=2&start-after=run42/b', 2)).toEqual(['run42/p%2Fq', 'run42/sub/c', 'run42/sub/d']);
      expect(await walk('marker=run42/b', 1)).toEqual(['run42/p%2Fq', 'run42/sub/c', 'run42/sub/d']);
    });

    it('refuses continuation tokens it did not issue, and keeps names out of its own', async () => {
      const before = relay.seen.length;
      for (const t of [Buffer.from('secret').toString('base64'), 'x', 'estl1.e30.AAAAAAAAAAAAAAAAAAAAAA']) {
        const r = await signed(gw.url, cred, 'GET', `/${BUCKET}?list-type=2&prefix=run42/&continuation-token=${encodeURIComponent(t)}`);
        expect(r.status, t).toBe(400);
        expect(r.body.toString()).toMatch(/<Code>InvalidArgument<\/Code>/);
      }
      expect(relay.seen.slice(before)).toEqual([]);
      // A token of one listing does not steer another.
      const first = await list('list-type=2&prefix=run42/&max-keys=1');
      const token = tag(first, 'NextContinuationToken')[0]!;
      const other = await signed(gw.url, cred, 'GET', `/${BUCKET}?list-type=2&prefix=run42/sub/&continuation-token=${encodeURIComponent(token)}`);
      expect(other.status).toBe(400);
    });

    it('encodes names when asked, whatever the store does with encoding-type', async () => {
      const xml = await list('list-type=2&prefix=run42/&encoding-type=url');
      expect(tag(xml, 'EncodingType')).toEqual(['url']);
      expect(tag(xml, 'Key')).toEqual(['run42/a', 'run42/b', 'run42/p%252Fq', 'run42/sub/c', 'run42/sub/d']);
      const plain = await list('list-type=2&prefix=run42/');
      expect(tag(plain, 'Key')).toContain('run42/p%2Fq');
      expect(tag(plain, 'EncodingType')).toEqual([]);
      // A whole-bucket credential's listings are the gateway's answers too.
      const w = issue(ISSUER, [{ bucket: BUCKET, prefix: '', write: false }], 3_600_000, Date.now());
      const whole = await signed(gw.url, { accessKeyId: w.accessKeyId, secretAccessKey: w.secretAccessKey, sessionToken: w.sessionToken }, 'GET', `/${BUCKET}?list-type=2&prefix=run42&encoding-type=url`);
      // (sorted here: s3rver lists in the order it walks its directories, not S3's)
      expect(tag(whole.body.toString(), 'Key').sort()).toEqual(
        ['run42%252Fliteral', 'run42-/y', 'run42.txt', 'run42/a', 'run42/b', 'run42/p%252Fq', 'run42/sub/c', 'run42/sub/d', 'run420/x'].sort(),
      );
    });

    it('lists versions and uploads only within the scope', async () => {
      for (const q of ['versions', 'versions&prefix=run', 'uploads', 'uploads&prefix=']) {
        const r = await signed(gw.url, cred, 'GET', `/${BUCKET}?${q}`);
        expect(r.status, q).toBe(403);
      }
      for (const q of ['versions&prefix=run42/', 'uploads&prefix=run42/']) {
        const r = await signed(gw.url, cred, 'GET', `/${BUCKET}?${q}`);
        for (const w of OUT_WORDS) expect(r.body.toString(), `${q} named ${w}`).not.toContain(w);
      }
    });

    it('pages through with the AWS SDK, from the root and within the scope', async () => {
      const sdk = new S3Client({ endpoint: gw.url, region: 'us-east-1', forcePathStyle: true, credentials: cred, maxAttempts: 1 });
      for (const Prefix of [undefined, 'run42/']) {
        const keys: string[] = [];
        for await (const page of paginateListObjectsV2({ client: sdk, pageSize: 2 }, { Bucket: BUCKET, Prefix })) {
          keys.push(...(page.Contents ?? []).map((o) => o.Key!));
        }
        expect(keys).toEqual([...IN].sort());
      }
      const root = await sdk.send(new ListObjectsV2Command({ Bucket: BUCKET, Delimiter: '/', EncodingType: 'url' }));
      expect(root.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['run42/']);
    });
  });
}
