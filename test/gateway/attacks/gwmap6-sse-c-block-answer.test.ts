// Attack: a store whose HEAD of an object says nothing of SSE-C but whose block answers (206 to a
// keyless ranged GET with If-Match) say `x-amz-server-side-encryption-customer-algorithm`.
//
// docs/STAGING.md ("SSE-C"): "an answer that says it is SSE-C is never stored, however it was
// asked for, whole or as range blocks". The whole-object fill checks the answer (s3Decision);
// a block's store decision is replaced by the block check alone (fetcher.ts: `if (target.block)
// decision = isBlockOf(...)`), which looks at status, ETag and Content-Range, not at SSE-C or
// no-store. So such blocks go to the gateway's disk and are served to later readers as hits.
// (A store that changes an object's metadata in place keeps its ETag, so a HEAD from before and a
// block from after can disagree the same way for `Cache-Control: no-store`.)
// Expected: no block whose answer says SSE-C (or no-store) is stored: the next read reaches the store.

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

const BIG = Buffer.alloc(3 << 20, 'BLOCK-SAYS-SSE-C/');
const ETAG = '"44444444444444444444444444444444"';

async function store(marker: Record<string, string>): Promise<S3Server & { gets: () => number }> {
  let gets = 0;
  const srv = http.createServer((req, res) => {
    const h: Record<string, string> = { etag: ETAG, 'last-modified': 'Tue, 24 Nov 2026 10:00:00 GMT', 'accept-ranges': 'bytes', 'content-type': 'application/octet-stream' };
    if (req.method === 'HEAD') {
      res.writeHead(200, { ...h, 'content-length': BIG.length });
      return res.end();
    }
    gets++;
    const m = /^bytes=(\d+)-(\d+)$/.exec(String(req.headers.range ?? ''));
    if (!m) {
      res.writeHead(200, { ...h, ...marker, 'content-length': BIG.length });
      return res.end(BIG);
    }
    const start = Number(m[1]);
    const end = Math.min(Number(m[2]), BIG.length - 1);
    res.writeHead(206, { ...h, ...marker, 'content-range': `bytes ${start}-${end}/${BIG.length}`, 'content-length': end - start + 1 });
    res.end(BIG.subarray(start, end + 1));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  const stop = () => new Promise<void>((r) => { srv.closeAllConnections(); srv.close(() => r()); });
  onTeardown(stop);
  return { kind: 's3rver', endpoint: `http://127.0.0.1:${port}`, port, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', region: 'us-east-1', dataDir: '', stop, kill: stop, gets: () => gets };
}

function holds(dir: string, needle: Buffer): boolean {
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const p = join(dir, name);
    if (statSync(p).isFile() && readFileSync(p).includes(needle)) return true;
  }
  return false;
}

describe('block answers that say SSE-C or no-store', () => {
  for (const [name, marker] of [
    ['SSE-C', { 'x-amz-server-side-encryption-customer-algorithm': 'AES256', 'x-amz-server-side-encryption-customer-key-md5': 'aGVsbG8td29ybGQtbWQ1LS0=' }],
    ['no-store', { 'cache-control': 'no-store' }],
  ] as const) {
    it(`are not stored (${name})`, async () => {
      const s = await store(marker);
      const g = await startS3Gw(s, ['--s3-block-size', '1MiB']);
      const cred = await g.issue(`${BUCKET}/sec/`);
      const path = `/${BUCKET}/sec/big`;
      const a = await send(g.gw, cred, 'GET', path, { headers: { range: 'bytes=100-199' } });
      expect(a.status).toBe(206);
      const before = s.gets();
      const b = await send(g.gw, cred, 'GET', path, { headers: { range: 'bytes=100-199' } });
      await sleep(300);
      expect({
        secondReadAtStore: s.gets() > before,
        second: String(b.headers['cache-status']),
        onDisk: holds(g.cacheDir, Buffer.from('BLOCK-SAYS-SSE-C/'.repeat(8))),
      }).toEqual({ secondReadAtStore: true, second: expect.not.stringMatching(/hit/), onDisk: false });
    }, 30_000);
  }
});
