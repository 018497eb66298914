// Attack: an object encrypted with a customer-provided key (SSE-C) read through the gateway by
// the key's holder, then by another credential of the same scope that does not hold the key.
//
// With SSE-C the store keeps only ciphertext and a GET must carry the key
// (`x-amz-server-side-encryption-customer-algorithm/-key/-key-MD5`); without it S3 answers 400
// InvalidRequest ("The object was stored using a form of Server Side Encryption. The correct
// parameters must be provided to retrieve the object."), and a HEAD 400 too. The gateway forwards
// the first reader's key headers in its fill, stores the decrypted body on its disk under
// s3://bucket/key, and answers every later reader from it (a mapped disk hit), key or no key.
//
// Expected: a read without the key never gets the plaintext: SSE-C answers are not stored and not
// shared (as an answer to a request with Authorization is not, RFC 9111 §3.5), or are served only
// to a request carrying the same key. The store here is a minimal S3 stand-in that enforces SSE-C
// as S3 does (s3rver has no SSE-C; MinIO accepts SSE-C only over TLS).

import { createHash } from 'node:crypto';
import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns, onTeardown } from '../../helpers/cleanup.ts';
import type { S3Server } from '../../helpers/s3rver.ts';
import { metric } from './disk-lib.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, send } from './s3-harness.ts';

afterAll(runTeardowns);

const KEY_BYTES = Buffer.alloc(32, 7);
const SSE = {
  'x-amz-server-side-encryption-customer-algorithm': 'AES256',
  'x-amz-server-side-encryption-customer-key': KEY_BYTES.toString('base64'),
  'x-amz-server-side-encryption-customer-key-md5': createHash('md5').update(KEY_BYTES).digest('base64'),
};
const PLAIN = 'patient-records-'.repeat(131072); // 2 MiB
const ETAG = '"0f343b0931126a20f133d67c2b018a3b"';
const PATH = `/${BUCKET}/run42/secret.bin`;

/** An S3 stand-in holding one SSE-C object: served only to a request with the right key. */
async function sseStore(): Promise<S3Server> {
  const srv = http.createServer((req, res) => {
    if ((req.url ?? '').split('?')[0] !== PATH) {
      res.writeHead(404, { 'content-type': 'application/xml' });
      return res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>');
    }
    if (req.headers['x-amz-server-side-encryption-customer-key'] !== SSE['x-amz-server-side-encryption-customer-key']) {
      const xml = '<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidRequest</Code><Message>The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.</Message></Error>';
      res.writeHead(400, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(xml) });
      return res.end(req.method === 'HEAD' ? undefined : xml);
    }
    res.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-length': PLAIN.length,
      etag: ETAG,
      'last-modified': 'Tue, 24 Nov 2026 10:00:00 GMT',
      'x-amz-server-side-encryption-customer-algorithm': 'AES256',
      'x-amz-server-side-encryption-customer-key-md5': SSE['x-amz-server-side-encryption-customer-key-md5'],
    });
    res.end(req.method === 'HEAD' ? undefined : PLAIN);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  onTeardown(() => new Promise<void>((r) => srv.close(() => r())));
  const port = (srv.address() as { port: number }).port;
  const stop = async () => undefined;
  return { kind: 's3rver', endpoint: `http://127.0.0.1:${port}`, port, accessKeyId: 'SITE', secretAccessKey: 'SITE-SECRET', region: 'us-east-1', dataDir: '/nonexistent', stop, kill: stop };
}

describe('an SSE-C object read through the gateway', () => {
  it('is never handed to a reader without the key', async () => {
    const store = await sseStore();
    const g = await startS3Gw(store);
    const holder = await g.issue(`${BUCKET}/run42/`);
    const other = await g.issue(`${BUCKET}/run42/`);
    // The store refuses a read without the key, through the gateway too, before anyone read it.
    const before = await send(g.gw, other, 'GET', PATH);
    expect(before.status).toBe(400);
    const withKey = await send(g.gw, holder, 'GET', PATH, { headers: SSE });
    expect(withKey.status).toBe(200);
    expect(withKey.body).toBe(PLAIN);
    const failed: string[] = [];
    for (const method of ['GET', 'GET', 'HEAD']) {
      const r = await send(g.gw, other, method, PATH);
      if (r.status === 200) failed.push(`${method} without the key: 200 ${String(r.headers['cache-status'])}${r.body === PLAIN ? ' with the plaintext' : ''}`);
    }
    expect(failed, `mapped bytes held: ${await metric(g.port, 'estuary_gateway_disk_mapped_bytes')}`).toEqual([]);
  }, 30_000);
});
