// Attack: SSE-C objects at a store the gateway caches from (a scripted S3 store, since s3rver and
// MinIO-without-TLS know no SSE-C).
//
// 1. An object is cached in plaintext, then replaced at the store by an SSE-C object. After
//    --s3-revalidate, a reader without the key must get the store's refusal (400), a reader with
//    the key the new plaintext (its headers reach the store), and nobody that plaintext after.
// 2. A store that answers SSE-C to a read that carried no key (a range read of a large object,
//    fetched as aligned blocks): docs/STAGING.md, "Cache semantics for S3": "an answer that says
//    it is SSE-C (`x-amz-server-side-encryption-customer-algorithm`) is never stored, however it
//    was asked for"; docs/CACHING.md: "nor is any answer that says it is SSE-C ... it is never
//    kept on the gateway's disk".
// Expected: as above; in 2, every range read reaches the store and the cache dir holds no byte
// of the SSE-C object.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import type { S3Server } from '../../helpers/s3rver.ts';
import { sleep } from './gateway-lib.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, send } from './s3-harness.ts';

afterAll(runTeardowns);

const KEY_HEADERS = {
  'x-amz-server-side-encryption-customer-algorithm': 'AES256',
  'x-amz-server-side-encryption-customer-key': Buffer.alloc(32, 7).toString('base64'),
  'x-amz-server-side-encryption-customer-key-md5': 'aGVsbG8td29ybGQtbWQ1LS0=',
};
const PLAIN = Buffer.from('PLAINTEXT-v1/'.repeat(100));
const SECRET = Buffer.from('SECRET-SSE-C-v2/'.repeat(100));
const BIG = Buffer.alloc(3 << 20, 'SSEC-BIG-SECRET/');

interface Store extends S3Server {
  phase: 'plain' | 'sse-c';
  readonly gets: string[];
}

/** An S3 store answering one bucket's objects as scripted; signatures are not checked. */
async function scriptedStore(): Promise<Store> {
  const gets: string[] = [];
  const srv = http.createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? '').split('?')[0]!);
    const hasKey = req.headers['x-amz-server-side-encryption-customer-key'] !== undefined;
    gets.push(`${req.method} ${path} ${req.headers.range ?? ''} key=${hasKey}`);
    const refuse = () => {
      const body = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InvalidRequest</Code><Message>The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.</Message></Error>';
      res.writeHead(400, { 'content-type': 'application/xml', 'content-length': req.method === 'HEAD' ? 0 : Buffer.byteLength(body) });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    let body: Buffer;
    let etag: string;
    let sse = false;
    if (path === `/${BUCKET}/sec/obj`) {
      if (store.phase === 'plain') {
        body = PLAIN;
        etag = '"11111111111111111111111111111111"';
      } else {
        if (!hasKey) return refuse();
        body = SECRET;
        etag = '"22222222222222222222222222222222"';
        sse = true;
      }
    } else if (path === `/${BUCKET}/sec/big`) {
      // A store that says SSE-C though no key was sent.
      body = BIG;
      etag = '"33333333333333333333333333333333"';
      sse = true;
    } else {
      res.writeHead(404, { 'content-length': 0 });
      return res.end();
    }
    const h: Record<string, string> = { etag, 'last-modified': 'Tue, 24 Nov 2026 10:00:00 GMT', 'accept-ranges': 'bytes', 'content-type': 'application/octet-stream' };
    if (sse) {
      h['x-amz-server-side-encryption-customer-algorithm'] = 'AES256';
      h['x-amz-server-side-encryption-customer-key-md5'] = KEY_HEADERS['x-amz-server-side-encryption-customer-key-md5'];
    }
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, h);
      return res.end();
    }
    const m = /^bytes=(\d+)-(\d+)$/.exec(String(req.headers.range ?? ''));
    if (m) {
      const start = Number(m[1]);
      const end = Math.min(Number(m[2]), body.length - 1);
      res.writeHead(206, { ...h, 'content-range': `bytes ${start}-${end}/${body.length}`, 'content-length': end - start + 1 });
      return res.end(req.method === 'HEAD' ? undefined : body.subarray(start, end + 1));
    }
    res.writeHead(200, { ...h, 'content-length': body.length });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  const stop = () => new Promise<void>((r) => { srv.closeAllConnections(); srv.close(() => r()); });
  onTeardown(stop);
  const store: Store = {
    kind: 's3rver', endpoint: `http://127.0.0.1:${port}`, port, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', region: 'us-east-1',
    dataDir: '', stop, kill: stop, phase: 'plain', gets,
  };
  return store;
}

/** Whether any file under `dir` contains `needle`. */
function holds(dir: string, needle: Buffer): boolean {
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const p = join(dir, name);
    if (statSync(p).isFile() && readFileSync(p).includes(needle)) return true;
  }
  return false;
}

describe('SSE-C at the store', () => {
  it('an object that became SSE-C after it was cached: refusal without the key, plaintext with it, never shared', async () => {
    const store = await scriptedStore();
    const g = await startS3Gw(store, ['--s3-revalidate', '1s']);
    const cred = await g.issue(`${BUCKET}/sec/`);
    const path = `/${BUCKET}/sec/obj`;
    expect((await send(g.gw, cred, 'GET', path)).body).toBe(PLAIN.toString());
    expect(String((await send(g.gw, cred, 'GET', path)).headers['cache-status'])).toMatch(/hit/);
    store.phase = 'sse-c';
    await sleep(1300);
    const noKey = await send(g.gw, cred, 'GET', path);
    const noKeyHead = await send(g.gw, cred, 'HEAD', path);
    const withKey = await send(g.gw, cred, 'GET', path, { headers: KEY_HEADERS });
    const withKeyHead = await send(g.gw, cred, 'HEAD', path, { headers: KEY_HEADERS });
    const withKeyRange = await send(g.gw, cred, 'GET', path, { headers: { ...KEY_HEADERS, range: 'bytes=0-15' } });
    const afterNoKey = await send(g.gw, cred, 'GET', path);
    await sleep(300);
    expect({
      noKey: [noKey.status, noKey.body.includes('PLAINTEXT') ? 'old plaintext' : ''],
      noKeyHead: noKeyHead.status,
      withKey: [withKey.status, withKey.body === SECRET.toString()],
      withKeyHead: [withKeyHead.status, withKeyHead.headers.etag],
      withKeyRange: [withKeyRange.status, withKeyRange.body],
      afterNoKey: [afterNoKey.status, afterNoKey.body.includes('SECRET') ? 'SSE-C plaintext shared' : afterNoKey.body.includes('PLAINTEXT') ? 'old plaintext' : ''],
      onDisk: holds(g.cacheDir, Buffer.from('SECRET-SSE-C-v2/')),
    }).toEqual({ noKey: [400, ''], noKeyHead: 400, withKey: [200, true], withKeyHead: [200, '"22222222222222222222222222222222"'], withKeyRange: [206, 'SECRET-SSE-C-v2/'], afterNoKey: [400, ''], onDisk: false });
  }, 30_000);

  it('a large object the store says is SSE-C, read in ranges without a key: not stored as blocks', async () => {
    const store = await scriptedStore();
    const g = await startS3Gw(store, ['--s3-block-size', '1MiB']);
    const cred = await g.issue(`${BUCKET}/sec/`);
    const path = `/${BUCKET}/sec/big`;
    const a = await send(g.gw, cred, 'GET', path, { headers: { range: 'bytes=100-199' } });
    expect(a.status).toBe(206);
    const before = store.gets.filter((l) => l.startsWith('GET')).length;
    const b = await send(g.gw, cred, 'GET', path, { headers: { range: 'bytes=100-199' } });
    expect(b.status).toBe(206);
    await sleep(300);
    expect({
      secondReadAtStore: store.gets.filter((l) => l.startsWith('GET')).length > before,
      secondCacheStatus: /hit/.test(String(b.headers['cache-status'])) ? 'hit' : 'not a hit',
      onDisk: holds(g.cacheDir, Buffer.from('SSEC-BIG-SECRET/'.repeat(8))),
    }).toEqual({ secondReadAtStore: true, secondCacheStatus: 'not a hit', onDisk: false });
  }, 30_000);
});
