// Attack: a ranged or conditional GetObject of an object the gateway will not store (its metadata
// says `Cache-Control: no-store`) when no other read of it is in flight.
//
// The read becomes the leader of a fill, which asks the store without the client's Range, If-Range
// and If-None-Match (handler.ts FILL_DROPPED). The store's 200 may not be stored, so the fill
// "passes" and the leader relays that whole 200 as it is (handler.ts #fromFill, state 'pass'):
// only If-Match / If-Unmodified-Since are checked on it. S3 (and MinIO, compared below) answers
// the range with 206 and its bytes, and a matching If-None-Match with 304.
// Expected: the same status and bytes as the store gives for the same request.

import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, direct, send } from './s3-harness.ts';

afterAll(runTeardowns);

const avail = await minioAvailable();
const text = (n: number, seed: string) => seed.repeat(Math.ceil(n / seed.length)).slice(0, n);
const KEY = 'run42/no-store.txt';

describe.skipIf(!avail.ok)('a ranged or conditional read of an object the gateway does not store', () => {
  it('is answered as MinIO answers it', async () => {
    const store = await startMinio({ buckets: [BUCKET] });
    const g = await startS3Gw(store);
    const cred = await g.issue(`${BUCKET}/run42/`);
    const site = new S3Client({ endpoint: store.endpoint, region: store.region, forcePathStyle: true, credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey } });
    const body = text(1_000_000, 'no-store-object-0123456789-');
    const put = await site.send(new PutObjectCommand({ Bucket: BUCKET, Key: KEY, Body: body, CacheControl: 'no-store' }));
    const etag = put.ETag!;
    const cases: Record<string, string>[] = [
      { range: 'bytes=100-199' },
      { range: 'bytes=-10' },
      { range: 'bytes=100-199', 'if-range': etag },
      { 'if-none-match': etag },
      { 'if-modified-since': new Date(Date.now() + 3600_000).toUTCString() },
    ];
    const seen: string[] = [];
    const want: string[] = [];
    for (const h of cases) {
      const viaGw = await send(g.gw, cred, 'GET', `/${BUCKET}/${KEY}`, { headers: h });
      seen.push(`${JSON.stringify(h)} -> ${viaGw.status} ${viaGw.body.length} bytes`);
      const atStore = await directWith(store, h);
      want.push(`${JSON.stringify(h)} -> ${atStore.status} ${atStore.length} bytes`);
    }
    expect(seen).toEqual(want);
    void direct;
  }, 60_000);
});

/** The same GET straight to the store with the site's keys. */
async function directWith(store: { endpoint: string; region: string; accessKeyId: string; secretAccessKey: string }, h: Record<string, string>): Promise<{ status: number; length: number }> {
  const site = new S3Client({ endpoint: store.endpoint, region: store.region, forcePathStyle: true, credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey } });
  const { GetObjectCommand } = await import('@aws-sdk/client-s3');
  try {
    const r = await site.send(
      new GetObjectCommand({
        Bucket: BUCKET,
        Key: KEY,
        Range: h.range,
        IfRange: h['if-range'],
        IfNoneMatch: h['if-none-match'],
        IfModifiedSince: h['if-modified-since'] ? new Date(h['if-modified-since']) : undefined,
      } as never),
    );
    const b = await r.Body!.transformToByteArray();
    return { status: r.$metadata.httpStatusCode ?? 0, length: b.length };
  } catch (err) {
    return { status: (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? -1, length: 0 };
  }
}
