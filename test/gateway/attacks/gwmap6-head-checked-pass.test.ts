// Attack: a HEAD with If-Match naming the store's new version of an object the gateway holds in
// an older version, when the new version may not be stored (its metadata says no-store, or it is
// over --max-object-size).
//
// Such a HEAD waits for a revalidation (handler.ts #miss, `checked`), which is a GET. When that
// GET's answer may not be stored, the fill passes and its leader — the HEAD — relays the GET's
// answer (handler.ts #fromFill, state 'pass': relayUpstream). Node drops the body of a HEAD
// answer, but the whole object is still pulled from the store and counted in
// estuary_gateway_bytes_sent_total as sent to the client, which received a head only.
// Expected: the HEAD gets 200 with the new version's head; bytes_sent grows by nothing (a HEAD has
// no body), and the store does not send the object's body for it.

import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { metric } from './disk-lib.ts';
import { sleep } from './gateway-lib.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, send } from './s3-harness.ts';

afterAll(runTeardowns);

const MiB = 2 ** 20;
const KEY = 'run42/head-checked.bin';

describe('a HEAD whose If-Match makes the gateway revalidate', () => {
  it('sends and counts no body', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const g = await startS3Gw(store);
    const cred = await g.issue(`${BUCKET}/run42/`);
    const site = new S3Client({ endpoint: store.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey } });
    await site.send(new PutObjectCommand({ Bucket: BUCKET, Key: KEY, Body: 'a'.repeat(4 * MiB) }));
    expect((await send(g.gw, cred, 'GET', `/${BUCKET}/${KEY}`)).status).toBe(200);
    const v2 = await site.send(new PutObjectCommand({ Bucket: BUCKET, Key: KEY, Body: 'b'.repeat(32 * MiB), CacheControl: 'no-store' }));
    await sleep(200);
    const before = await metric(g.port, 'estuary_gateway_bytes_sent_total');
    const inBefore = await metric(g.port, 'estuary_gateway_bytes_received_total');
    const head = await send(g.gw, cred, 'HEAD', `/${BUCKET}/${KEY}`, { headers: { 'if-match': v2.ETag! } });
    await sleep(1000);
    const sent = (await metric(g.port, 'estuary_gateway_bytes_sent_total')) - before;
    const received = (await metric(g.port, 'estuary_gateway_bytes_received_total')) - inBefore;
    expect({ status: head.status, length: head.headers['content-length'], sentMiB: Math.round(sent / MiB), receivedMiB: Math.round(received / MiB) }).toEqual({
      status: 200,
      length: String(32 * MiB),
      sentMiB: 0,
      receivedMiB: 0,
    });
  }, 60_000);
});
