// Attack: `{"url": "s3://bucket/key"}` purge of an object read in aligned blocks, with --workers 2
// and blocks in both workers' memory, after the object was replaced at the store behind the
// gateway's back (the reason an operator purges).
//
// docs/CACHING.md (admin API): "S3 objects are purged as `s3://bucket/key`, which also removes the
// aligned blocks stored of that object (every version's)"; docs/STAGING.md: "Purging
// `s3://bucket/key` (`{"url": …}`) removes the object's blocks too".
// Expected: the purge counts the blocks; every range read after it, whichever worker answers,
// has the new version's bytes, and none is a hit.

import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { adminPost } from './gwindex2-lib.ts';
import { startS3Gw, TOKEN } from './gwmap4-lib.ts';
import { BUCKET, send } from './s3-harness.ts';

afterAll(runTeardowns);

const V1 = Buffer.alloc(4 << 20, 'version-one-bytes/');
const V2 = Buffer.alloc(4 << 20, 'VERSION-TWO-BYTES/');
const RANGES: Array<[number, number]> = [[0, 99], [1_500_000, 1_500_099], [3_000_000, 3_000_099]];

describe('an s3:// URL purge with --workers 2', async () => {
  const avail = await minioAvailable();
  it.skipIf(!avail.ok)('drops the blocks in both workers: the next range reads have the new bytes', async () => {
    const store = await startMinio({ buckets: [BUCKET] });
    const g = await startS3Gw(store, ['--workers', '2', '--s3-block-size', '1MiB', '--mem-object-max', '2MiB']);
    const cred = await g.issue(`${BUCKET}/pb/`);
    const site = new S3Client({ endpoint: store.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey } });
    await site.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'pb/obj.bin', Body: V1 }));
    const path = `/${BUCKET}/pb/obj.bin`;
    const read = (r: [number, number]) => send(g.gw, cred, 'GET', path, { headers: { range: `bytes=${r[0]}-${r[1]}` } });
    let hits = 0;
    for (let round = 0; round < 4; round++) {
      for (const r of RANGES) {
        const s = await read(r);
        expect(s.status).toBe(206);
        expect(s.body).toBe(V1.subarray(r[0], r[1] + 1).toString());
        if (/hit/.test(String(s.headers['cache-status']))) hits++;
      }
    }
    expect(hits).toBeGreaterThan(0);

    await site.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'pb/obj.bin', Body: V2 }));
    const answer = (await adminPost(g.port, TOKEN, 'purge', { url: `s3://${BUCKET}/pb/obj.bin` })) as { purged: number };
    const after: string[] = [];
    for (let round = 0; round < 4; round++) {
      for (const r of RANGES) {
        const s = await read(r);
        const want = V2.subarray(r[0], r[1] + 1).toString();
        after.push(s.status === 206 && s.body === want ? 'new' : `${s.status} ${s.body === V1.subarray(r[0], r[1] + 1).toString() ? 'OLD BYTES' : s.body.slice(0, 40)} ${String(s.headers['cache-status'])}`);
      }
    }
    expect({ purgedAtLeastBlocks: answer.purged >= RANGES.length, after }).toEqual({ purgedAtLeastBlocks: true, after: new Array(12).fill('new') });
  }, 40_000);
});
