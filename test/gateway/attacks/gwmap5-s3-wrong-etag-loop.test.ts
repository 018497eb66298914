// Attack: a client looping on a wrong ETag (an If-Match naming a version that is gone), against a
// cached object, through the gateway in front of MinIO; then the same with the store down.
//
// A stored copy that fails If-Match is revalidated with the store (docs/STAGING.md, "Cache
// semantics for S3": "first checked with the store (`If-None-Match: ETAG`, as after
// `--s3-revalidate`)"). That check costs a 304, a few hundred bytes: a client retrying a wrong
// ETag must not pull the whole object over the link on every try. And "When the store cannot be
// reached for that check, the client gets the error, never the cached copy."
// Expected: every try is 412 PreconditionFailed; the store sends far less than one object's body
// for all the tries together; with the store down, a 5xx and no object bytes.

import net from 'node:net';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, send } from './s3-harness.ts';

afterAll(runTeardowns);

const BODY = Buffer.alloc(4 << 20, 'wrong-etag-loop/');

/** A TCP relay to `target` that counts the bytes the store sends back. */
async function byteRelay(target: string): Promise<{ url: string; fromStore: () => number }> {
  const t = new URL(target);
  let bytes = 0;
  const sockets = new Set<net.Socket>();
  const srv = net.createServer((c) => {
    const up = net.connect(Number(t.port), t.hostname);
    sockets.add(c).add(up);
    c.on('error', () => up.destroy());
    up.on('error', () => c.destroy());
    c.on('close', () => up.destroy());
    up.on('close', () => c.destroy());
    up.on('data', (d: Buffer) => (bytes += d.length));
    c.pipe(up);
    up.pipe(c);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  onTeardown(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => srv.close(() => r()));
  });
  return { url: `http://127.0.0.1:${(srv.address() as net.AddressInfo).port}`, fromStore: () => bytes };
}

describe('a client retrying an If-Match whose version is gone', async () => {
  const avail = await minioAvailable();
  it.skipIf(!avail.ok)('costs the store a 304 per try, not the object; with the store down it gets an error, not the copy', async () => {
    const store = await startMinio({ buckets: [BUCKET] });
    const relay = await byteRelay(store.endpoint);
    const g = await startS3Gw({ ...store, endpoint: relay.url });
    const cred = await g.issue(`${BUCKET}/loop/`);
    const site = new S3Client({ endpoint: store.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey } });
    await site.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'loop/big.bin', Body: BODY }));
    const via = new S3Client({ endpoint: g.gw, region: 'us-east-1', forcePathStyle: true, credentials: cred });
    const r = await via.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'loop/big.bin' }));
    expect(Buffer.from(await r.Body!.transformToByteArray()).length).toBe(BODY.length);

    const before = relay.fromStore();
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const s = await send(g.gw, cred, 'GET', `/${BUCKET}/loop/big.bin`, { headers: { 'if-match': '"0123456789abcdef0123456789abcdef"' } });
      statuses.push(s.status);
    }
    const tries = await Promise.all(
      Array.from({ length: 8 }, () => send(g.gw, cred, 'GET', `/${BUCKET}/loop/big.bin`, { headers: { 'if-unmodified-since': 'Mon, 01 Jan 2001 00:00:00 GMT' } })),
    );
    statuses.push(...tries.map((s) => s.status));
    const sent = relay.fromStore() - before;
    expect(statuses).toEqual(new Array(16).fill(412));
    // 16 checks, each a 304 of well under 4 KiB; one refetch of the object would be 4 MiB.
    expect(sent).toBeLessThan(64 * 1024);

    await store.kill();
    const down = await send(g.gw, cred, 'GET', `/${BUCKET}/loop/big.bin`, { headers: { 'if-match': '"0123456789abcdef0123456789abcdef"' } });
    expect({ status: down.status >= 500, objectBytes: down.body.length >= BODY.length }).toEqual({ status: true, objectBytes: false });
    const downIus = await send(g.gw, cred, 'HEAD', `/${BUCKET}/loop/big.bin`, { headers: { 'if-unmodified-since': 'Mon, 01 Jan 2001 00:00:00 GMT' } });
    expect(downIus.status).toBeGreaterThanOrEqual(500);
  }, 40_000);
});
