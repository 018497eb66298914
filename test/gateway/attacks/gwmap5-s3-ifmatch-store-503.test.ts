// Attack: a download's If-Match names the store's new version while the gateway holds the old
// one, and the store answers the revalidation with 503 SlowDown / 500 InternalError (S3's
// throttling and transient errors, which every SDK retries).
//
// docs/STAGING.md, "Cache semantics for S3": a cached copy failing If-Match "is first checked
// with the store ... When the store cannot be reached for that check, the client gets the error,
// never the cached copy"; docs/CACHING.md: "Such a request is never answered stale when the
// upstream fails." A 412 here is wrong twice: the client's version is the current one, and boto3
// and awscli treat 412 during download_file as final (the object changed) instead of retrying a
// 5xx.
// Expected: a 5xx (the store's, or the gateway's 502), GET and HEAD, which SDKs retry; never 412,
// never the old bytes; once the store recovers, the new version is served for the same If-Match.

import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import type { S3Server } from '../../helpers/s3rver.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, send } from './s3-harness.ts';

afterAll(runTeardowns);

const V1 = { etag: '"11111111111111111111111111111111"', body: Buffer.from('old-version/'.repeat(200)) };
const V2 = { etag: '"22222222222222222222222222222222"', body: Buffer.from('NEW-VERSION/'.repeat(200)) };

/** A store serving one object as scripted: v1, then v2 behind an error status (or not). */
async function scriptedStore(): Promise<S3Server & { state: { version: typeof V1; failWith?: number } }> {
  const state: { version: typeof V1; failWith?: number } = { version: V1 };
  const srv = http.createServer((req, res) => {
    if (state.failWith !== undefined) {
      const code = state.failWith === 503 ? 'SlowDown' : 'InternalError';
      const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>Please reduce your request rate.</Message></Error>`;
      res.writeHead(state.failWith, { 'content-type': 'application/xml', 'content-length': req.method === 'HEAD' ? 0 : Buffer.byteLength(body) });
      return res.end(req.method === 'HEAD' ? undefined : body);
    }
    const v = state.version;
    const h = { etag: v.etag, 'last-modified': 'Tue, 24 Nov 2026 10:00:00 GMT', 'content-type': 'application/octet-stream' };
    if (req.headers['if-none-match'] === v.etag) {
      res.writeHead(304, h);
      return res.end();
    }
    res.writeHead(200, { ...h, 'content-length': v.body.length });
    res.end(req.method === 'HEAD' ? undefined : v.body);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  const stop = () => new Promise<void>((r) => { srv.closeAllConnections(); srv.close(() => r()); });
  onTeardown(stop);
  return { kind: 's3rver', endpoint: `http://127.0.0.1:${port}`, port, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', region: 'us-east-1', dataDir: '', stop, kill: stop, state };
}

describe('If-Match naming the store\'s new version while the store fails', () => {
  it('answers the store\'s 5xx, not 412 from the old cached copy', async () => {
    const store = await scriptedStore();
    const g = await startS3Gw(store);
    const cred = await g.issue(`${BUCKET}/dl/`);
    const path = `/${BUCKET}/dl/obj.bin`;
    expect((await send(g.gw, cred, 'GET', path)).status).toBe(200);
    expect(String((await send(g.gw, cred, 'GET', path)).headers['cache-status'])).toMatch(/hit/);

    // The object is replaced; the client learnt v2's ETag from the store (a HEAD, a listing).
    store.state.version = V2;
    const got: Record<string, unknown> = {};
    for (const failWith of [503, 500]) {
      store.state.failWith = failWith;
      const get = await send(g.gw, cred, 'GET', path, { headers: { 'if-match': V2.etag, range: 'bytes=0-99' } });
      const head = await send(g.gw, cred, 'HEAD', path, { headers: { 'if-match': V2.etag } });
      got[failWith] = { get: get.status >= 500 ? '5xx' : get.status, oldBytes: get.body.includes('old-version'), head: head.status >= 500 ? '5xx' : head.status };
    }
    store.state.failWith = undefined;
    const healed = await send(g.gw, cred, 'GET', path, { headers: { 'if-match': V2.etag } });
    got.healed = [healed.status, healed.body === V2.body.toString()];
    expect(got).toEqual({
      503: { get: '5xx', oldBytes: false, head: '5xx' },
      500: { get: '5xx', oldBytes: false, head: '5xx' },
      healed: [200, true],
    });
  }, 30_000);
});
