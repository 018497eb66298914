// Attack: S3 store answers without Content-Length (chunked), whole and as block ranges, with
// --workers 1 and 2; a second user scoped to another prefix reading what the first read; and what
// a client HEAD's 404 costs with --workers 2 (s3fs sends a HEAD before each new file).
//
// docs/STAGING.md / commit 110c019: "S3 answers without a length are never stored"; a client
// HEAD's 404 drops the object's trusted version in every worker.
// Expected: every read of an object the store sends chunked reaches the store and gets the exact
// bytes; only-if-cached after such reads is 504; a second user never gets the first user's object;
// HEAD 404s of new keys cost about the same with --workers 2 as with 1.

import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import type { S3Server } from '../../helpers/s3rver.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, send, writeUndelimited } from './s3-harness.ts';

afterAll(runTeardowns);

const SIZE = 4 << 20;
const BIG = Buffer.alloc(SIZE);
for (let i = 0; i < SIZE; i++) BIG[i] = 0x41 + (Math.floor(i / 11) % 26);
const SMALL = Buffer.from('small object sent chunked by the store');
const ETAG = '"88888888888888888888888888888888"';

async function chunkedStore(): Promise<S3Server & { seen: string[] }> {
  const seen: string[] = [];
  const srv = net.createServer((s) => {
    s.on('error', () => {});
    let buf = '';
    s.on('data', (d) => {
      buf += d.toString('latin1');
      for (;;) {
        const he = buf.indexOf('\r\n\r\n');
        if (he === -1) return;
        const head = buf.slice(0, he);
        buf = buf.slice(he + 4);
        const [method, path] = head.split(' ') as [string, string];
        const range = /\r\nrange: *([^\r]*)/i.exec(head)?.[1];
        seen.push(`${method} ${path} ${range ?? '-'}`);
        if (path.includes('missing')) {
          s.write(`HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n`);
          continue;
        }
        const obj = path.includes('big') ? BIG : SMALL;
        const h = `ETag: ${ETAG}\r\nLast-Modified: Tue, 24 Nov 2026 10:00:00 GMT\r\nAccept-Ranges: bytes\r\nContent-Type: application/octet-stream\r\n`;
        if (method === 'HEAD') {
          s.write(`HTTP/1.1 200 OK\r\n${h}Content-Length: ${obj.length}\r\n\r\n`);
          continue;
        }
        const m = range ? /bytes=(\d+)-(\d+)/.exec(range) : null;
        if (m) {
          const [a, b] = [Number(m[1]), Math.min(Number(m[2]), obj.length - 1)];
          writeUndelimited(s, '206 Partial Content', `${h}Content-Range: bytes ${a}-${b}/${obj.length}\r\n`, obj.subarray(a, b + 1), 'chunked');
        } else {
          writeUndelimited(s, '200 OK', h, obj, 'chunked');
        }
      }
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  const stop = () => new Promise<void>((r) => srv.close(() => r()));
  onTeardown(stop);
  return { kind: 's3rver', endpoint: `http://127.0.0.1:${port}`, port, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', region: 'us-east-1', dataDir: '', stop, kill: stop, seen };
}

const close = { connection: 'close' };

describe('S3 answers without Content-Length', () => {
  for (const workers of ['1', '2']) {
    it(`are never stored, whole or as blocks, and a second user never reads them (--workers ${workers})`, async () => {
      const s = await chunkedStore();
      const g = await startS3Gw(s, ['--s3-revalidate', '60s', '--s3-block-size', '1MiB', '--workers', workers]);
      const a = await g.issue(`${BUCKET}/run42/`);
      const b = await g.issue(`${BUCKET}/run43/`);
      const bad: string[] = [];
      const small = `/${BUCKET}/run42/small.bin`;
      const big = `/${BUCKET}/run42/big.bin`;
      for (let i = 0; i < 3; i++) {
        const before = s.seen.length;
        const w = await send(g.gw, a, 'GET', small, { headers: close });
        if (w.status !== 200 || w.body !== SMALL.toString()) bad.push(`whole read ${i}: ${w.status} ${w.body.length} bytes`);
        if (i > 0 && !s.seen.slice(before).some((x) => x.startsWith('GET'))) bad.push(`whole read ${i} answered without the store (${String(w.headers['cache-status'])})`);
        const before2 = s.seen.length;
        const r = await send(g.gw, a, 'GET', big, { headers: { ...close, range: 'bytes=1500000-1500099' } });
        if (r.status !== 206 || r.body !== BIG.subarray(1500000, 1500100).toString('latin1')) bad.push(`range read ${i}: ${r.status} ${r.body.length} bytes`);
        if (i > 0 && !s.seen.slice(before2).some((x) => x.startsWith('GET'))) bad.push(`range read ${i} answered without the store (${String(r.headers['cache-status'])})`);
      }
      for (const [p, range] of [[small, undefined], [big, 'bytes=1500000-1500099']] as const) {
        const o = await send(g.gw, a, 'GET', p, { headers: { ...close, 'cache-control': 'only-if-cached', ...(range ? { range } : {}) } });
        if (o.status !== 504) bad.push(`only-if-cached ${p} ${range ?? ''}: ${o.status} (${String(o.headers['cache-status'])})`);
      }
      // The second user, by spellings of the same key.
      for (const p of [small, big, `/${BUCKET}/run43/../run42/small.bin`, `/${BUCKET}/run43/%2E%2E/run42/big.bin`, `/${BUCKET}//run42/small.bin`]) {
        for (const h of [{}, { range: 'bytes=1500000-1500099' }, { 'cache-control': 'only-if-cached' }, { 'if-none-match': '*' }] as Record<string, string>[]) {
          const r = await send(g.gw, b, 'GET', p, { headers: { ...close, ...h } });
          if (r.status < 400 || r.body.includes('small object') || r.body.includes('ABCDEF')) bad.push(`second user ${p} ${JSON.stringify(h)}: ${r.status}`);
        }
      }
      expect(bad, `${bad.join('\n')}\nstore saw ${s.seen.length} requests`).toEqual([]);
    }, 90_000);
  }

  it('a client HEAD 404 of a new key costs about the same with --workers 2 as with 1', async () => {
    const times: Record<string, number> = {};
    for (const workers of ['1', '2']) {
      const s = await chunkedStore();
      const g = await startS3Gw(s, ['--s3-revalidate', '60s', '--workers', workers]);
      const a = await g.issue(`${BUCKET}/run42/`);
      for (let i = 0; i < 20; i++) await send(g.gw, a, 'HEAD', `/${BUCKET}/run42/warm-missing-${i}`);
      const t0 = performance.now();
      const N = 300;
      let notFound = 0;
      for (let i = 0; i < N; i++) if ((await send(g.gw, a, 'HEAD', `/${BUCKET}/run42/new-missing-${i}`)).status === 404) notFound++;
      times[workers] = (performance.now() - t0) / N;
      expect(notFound).toBe(N);
      await g.child.stop();
    }
    console.log(`HEAD 404 per request: --workers 1 ${times['1']!.toFixed(2)} ms, --workers 2 ${times['2']!.toFixed(2)} ms`);
    expect(times['2']!).toBeLessThan(times['1']! * 3 + 2);
  }, 120_000);
});
