// Attack: S3 requests without Content-Length and without Transfer-Encoding (their body stream
// starts ended since da81793), sent raw with a valid SigV4 signature, --workers 1 and 2.
// What the store ends up with is checked directly. A request must get an answer (no hang), a
// bodyless PutObject stores an empty object, a bodyless DeleteObjects gets MalformedXML.
// These rows held (regression tests).

import { createHash, createHmac } from 'node:crypto';
import { connect } from 'node:net';
import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, type Cred, direct } from './s3-harness.ts';

afterAll(runTeardowns);

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const hmac = (k: Buffer | string, s: string) => createHmac('sha256', k).update(s, 'utf8').digest();
const canon = (q: string) =>
  q === ''
    ? ''
    : q
        .split('&')
        .map((p) => (p.includes('=') ? p : `${p}=`))
        .sort()
        .join('&');

/** A signed request with exactly `extra` as its other header lines, and `body` after the head. */
async function rawS3(gw: string, cred: Cred, method: string, target: string, extra: Record<string, string> = {}, body = '', waitMs = 8000) {
  const u = new URL(gw);
  const now = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const date = now.slice(0, 8);
  const [path, query = ''] = target.split('?');
  const h: Record<string, string> = { host: u.host, 'x-amz-date': now, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', 'x-amz-security-token': cred.sessionToken };
  for (const [k, v] of Object.entries(extra)) if (k.startsWith('x-amz-')) h[k] = v;
  const names = Object.keys(h).sort();
  const creq = [method, path, canon(query), names.map((k) => `${k}:${h[k]}\n`).join(''), names.join(';'), h['x-amz-content-sha256']].join('\n');
  const scope = `${date}/us-east-1/s3/aws4_request`;
  const key = hmac(hmac(hmac(hmac(`AWS4${cred.secretAccessKey}`, date), 'us-east-1'), 's3'), 'aws4_request');
  const sig = createHmac('sha256', key).update(['AWS4-HMAC-SHA256', now, scope, sha(creq)].join('\n')).digest('hex');
  h.authorization = `AWS4-HMAC-SHA256 Credential=${cred.accessKeyId}/${scope}, SignedHeaders=${names.join(';')}, Signature=${sig}`;
  const lines = { ...h, ...Object.fromEntries(Object.entries(extra).filter(([k]) => !k.startsWith('x-amz-'))) };
  const s = connect(Number(u.port), u.hostname);
  await once(s, 'connect');
  let out = '';
  s.on('data', (d) => (out += d.toString('latin1')));
  s.on('error', () => {});
  s.write(`${method} ${target} HTTP/1.1\r\n${Object.entries(lines).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n${body}`);
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline && !/HTTP\/1\.1 [2-5]\d\d [^]*?\r\n\r\n/.test(out)) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 200));
  s.destroy();
  const m = /HTTP\/1\.1 ([2-5]\d\d) /.exec(out);
  return { status: m ? Number(m[1]) : 0, text: out };
}

for (const workers of ['1', '2']) {
  describe(`S3 requests without body headers (--workers ${workers})`, () => {
    it('are answered, and do to the store what they say', async () => {
      const store = await startS3rver({ buckets: [BUCKET] });
      const g = await startS3Gw(store, ['--workers', workers]);
      const cred = await g.issue(`${BUCKET}/run42/`, true);
      const k = `/${BUCKET}/run42/bodyless-${workers}`;
      const results: string[] = [];
      const row = async (name: string, p: Promise<{ status: number; text: string }>, want: number) => {
        const r = await p;
        results.push(`${name}: ${r.status}`);
        expect(r.status, `${name}\n${r.text}`).toBe(want);
        return r;
      };
      expect((await direct(store, 'PUT', `${k}-old`, 'previous bytes')).status).toBe(200);
      await row('PutObject, no body headers', rawS3(g.gw, cred, 'PUT', `${k}-old`), 200);
      const got = await direct(store, 'GET', `${k}-old`);
      expect(got.status).toBe(200);
      expect(got.body).toBe('');
      await row('PutObject, Content-Length: 0', rawS3(g.gw, cred, 'PUT', `${k}-zero`, { 'content-length': '0' }), 200);
      await row('PutObject, Expect without a body', rawS3(g.gw, cred, 'PUT', `${k}-expect`, { expect: '100-continue' }), 200);
      expect((await direct(store, 'GET', `${k}-expect`)).status).toBe(200);
      await row('CopyObject, no body headers', rawS3(g.gw, cred, 'PUT', `${k}-copy`, { 'x-amz-copy-source': `${BUCKET}/run42/bodyless-${workers}-zero` }), 200);
      const created = await row('CreateMultipartUpload, no body headers', rawS3(g.gw, cred, 'POST', `${k}-mp?uploads`), 200);
      const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(created.text)?.[1];
      expect(uploadId).toBeDefined();
      await row('UploadPart, no body headers', rawS3(g.gw, cred, 'PUT', `${k}-mp?partNumber=1&uploadId=${encodeURIComponent(uploadId!)}`), 200);
      const del = await row('DeleteObjects, no body headers', rawS3(g.gw, cred, 'POST', `/${BUCKET}?delete`), 400);
      expect(del.text).toContain('MalformedXML');
      await row('DeleteObject, no body headers', rawS3(g.gw, cred, 'DELETE', `${k}-zero`), 204);
      expect((await direct(store, 'GET', `${k}-zero`)).status).toBe(404);
    }, 90_000);
  });
}
