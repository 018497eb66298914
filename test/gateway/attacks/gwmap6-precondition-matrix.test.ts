// Attack: preconditions on cached S3 answers, compared request by request with what MinIO answers
// for the same request (docs/STAGING.md: "evaluated as S3 does").
//
// Three ways an answer is made: a disk hit read in slices (100 KB), a disk hit written from the
// mapped page cache (2 MiB, plain GET), and range reads from blocks (10 MiB, --s3-block-size 4MiB,
// never read whole). Every request goes to MinIO with the site's keys and to the gateway with a
// scoped credential; the status (and for 200/206 the body length) must be the same.

import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { atStore, BUCKET, send } from './s3-harness.ts';

afterAll(runTeardowns);

const avail = await minioAvailable();
const text = (n: number, seed: string) => seed.repeat(Math.ceil(n / seed.length)).slice(0, n);

describe.skipIf(!avail.ok)('preconditions on cached S3 answers, as MinIO answers them', () => {
  it('give MinIO\'s status for every spelling', async () => {
    const store = await startMinio({ buckets: [BUCKET] });
    const g = await startS3Gw(store, ['--s3-block-size', '4MiB']);
    const cred = await g.issue(`${BUCKET}/run42/`);
    const site = new S3Client({ endpoint: store.endpoint, region: store.region, forcePathStyle: true, credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey } });
    const objects = [
      { key: 'run42/small.txt', size: 100_000, warm: true },
      { key: 'run42/mapped.txt', size: 2 * 2 ** 20, warm: true },
      { key: 'run42/blocks.txt', size: 10 * 2 ** 20, warm: false },
    ];
    const diffs: string[] = [];
    let compared = 0;
    for (const o of objects) {
      const put = await site.send(new PutObjectCommand({ Bucket: BUCKET, Key: o.key, Body: text(o.size, `${o.key}-0123456789-`) }));
      const etag = put.ETag!;
      const bare = etag.slice(1, -1);
      const head = await atStore(store, 'HEAD', `/${BUCKET}/${o.key}`, {});
      expect(head.status).toBe(200);
      const lmRes = await site.send(new (await import('@aws-sdk/client-s3')).HeadObjectCommand({ Bucket: BUCKET, Key: o.key }));
      const lm = lmRes.LastModified!;
      const past = new Date(lm.getTime() - 86400_000).toUTCString();
      const future = new Date(lm.getTime() + 86400_000).toUTCString();
      const same = lm.toUTCString();
      const path = `/${BUCKET}/${o.key}`;
      if (o.warm) {
        await send(g.gw, cred, 'GET', path);
        await send(g.gw, cred, 'GET', path);
      }
      // Single tags only: lists, W/ and If-Range naming another version are where RFC 9110 and
      // MinIO part ways, and the gateway documents its RFC reading (a safe one) for those.
      const tags = [etag, bare, '""', '', '*', ` ${etag} `, '"nope"', `"${bare}-3"`, `"${bare}`];
      const range = o.warm ? 'bytes=50000-50099' : 'bytes=5000000-5000099';
      const cases: Record<string, string>[] = [];
      for (const t of tags) {
        cases.push({ 'if-match': t, range }, { 'if-none-match': t, range });
        cases.push({ 'if-match': t }, { 'if-none-match': t });
      }
      // If-Range naming this version, quoted or (as docs/STAGING.md reads S3) without its quotes, or by its date.
      for (const t of [etag, bare, same]) cases.push({ 'if-range': t, range });
      for (const d of [past, future, same, 'garbage']) {
        cases.push({ 'if-unmodified-since': d, range });
        cases.push({ 'if-modified-since': d }, { 'if-unmodified-since': d });
      }
      cases.push({ 'if-match': etag, 'if-unmodified-since': past }, { 'if-none-match': etag, 'if-modified-since': past });
      for (const method of ['GET', 'HEAD']) {
        for (const h of cases) {
          const want = await atStore(store, method, path, h);
          const got = await send(g.gw, cred, method, path, { headers: h });
          const gl = Buffer.byteLength(got.body);
          compared++;
          const norm = (s: number, l: number) => `${s}${s === 200 || s === 206 ? ` ${l}` : ''}`;
          if (norm(want.status, want.length) !== norm(got.status, method === 'HEAD' ? 0 : gl) && !(method === 'HEAD' && want.status === got.status)) {
            diffs.push(`${o.key} ${method} ${JSON.stringify(h)}: minio ${norm(want.status, want.length)}, gateway ${norm(got.status, gl)} (${String(got.headers['cache-status'])})`);
          }
        }
      }
    }
    // A first read (a miss, answered from the fill it starts) that names the version it holds.
    for (const [i, h] of [{ 'if-none-match': 'E' }, { 'if-modified-since': 'F' }].entries()) {
      const key = `run42/cold-${i}.txt`;
      const put = await site.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: text(300_000, 'cold-object-') }));
      const hdr: Record<string, string> = h['if-none-match'] ? { 'if-none-match': put.ETag! } : { 'if-modified-since': new Date(Date.now() + 86400_000).toUTCString() };
      const want = await atStore(store, 'GET', `/${BUCKET}/${key}`, hdr);
      const got = await send(g.gw, cred, 'GET', `/${BUCKET}/${key}`, { headers: hdr });
      if (want.status !== got.status) diffs.push(`cold ${key} GET ${JSON.stringify(hdr)}: minio ${want.status}, gateway ${got.status} (${String(got.headers['cache-status'])})`);
    }
    expect(compared).toBeGreaterThan(80);
    expect(diffs, diffs.join('\n')).toEqual([]);
  }, 240_000);
});
