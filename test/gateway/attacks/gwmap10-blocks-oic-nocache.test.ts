// Attack: `Cache-Control: only-if-cached` on S3 block reads whose blocks are all stored, of a
// trusted version, combined with the request directives that forbid a stored answer unchecked:
// `no-cache`, `max-age=0`, `Pragma: no-cache`, in any case and in two headers; and Origin or a
// conditional (regression rows).
//
// RFC 9111 §5.2.1.7: with only-if-cached "the cache SHOULD either respond using a stored response
// consistent with the other constraints of the request or respond with a 504"; never forwarded.
// docs/STAGING.md: a range read with only-if-cached "is served when every block it covers is
// stored, of a version trusted without asking the store, and is otherwise answered 504 without
// asking the store". Expected: 206 from the blocks or 504; the store sees nothing.
// Today (gateway/proxy/blocks.ts): only-if-cached passes when all blocks are stored, and then the
// no-cache / max-age=0 branch asks the store for the version again.

import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import type { S3Server } from '../../helpers/s3rver.ts';
import { sleep } from './gateway-lib.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, send } from './s3-harness.ts';

afterAll(runTeardowns);

const SIZE = 4 << 20;
const BIG = Buffer.alloc(SIZE);
for (let i = 0; i < SIZE; i++) BIG[i] = 0x61 + (Math.floor(i / 7) % 26);
const ETAG = '"77777777777777777777777777777777"';

interface Seen { method: string; range?: string; origin?: string; cc?: string }

async function recordingStore(): Promise<S3Server & { seen: Seen[] }> {
  const seen: Seen[] = [];
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
        const method = head.split(' ')[0]!;
        const hv = (n: string) => new RegExp(`\\r\\n${n}: *([^\\r]*)`, 'i').exec(head)?.[1];
        const origin = hv('origin');
        const range = hv('range');
        seen.push({ method, range, origin, cc: hv('cache-control') });
        let h = `ETag: ${ETAG}\r\nLast-Modified: Tue, 24 Nov 2026 10:00:00 GMT\r\nAccept-Ranges: bytes\r\nContent-Type: application/octet-stream\r\nVary: Origin\r\n`;
        if (origin) h += `Access-Control-Allow-Origin: ${origin}\r\n`;
        if (method === 'HEAD') {
          s.write(`HTTP/1.1 200 OK\r\n${h}Content-Length: ${SIZE}\r\n\r\n`);
          continue;
        }
        let start = 0;
        let end = SIZE - 1;
        let status = '200 OK';
        const m = range ? /bytes=(\d*)-(\d*)/.exec(range) : null;
        if (m) {
          if (m[1] === '') { start = SIZE - Number(m[2]); } else { start = Number(m[1]); end = m[2] === '' ? SIZE - 1 : Math.min(Number(m[2]), SIZE - 1); }
          status = `206 Partial Content\r\nContent-Range: bytes ${start}-${end}/${SIZE}`;
        }
        s.write(`HTTP/1.1 ${status}\r\n${h}Content-Length: ${end - start + 1}\r\n\r\n`);
        s.write(BIG.subarray(start, end + 1));
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
const OIC = { ...close, 'cache-control': 'only-if-cached' };
const bytes = (a: number, b: number) => BIG.subarray(a, b + 1).toString('latin1');

describe('only-if-cached with no-cache, max-age=0 or Pragma on stored blocks', () => {
  for (const workers of ['1', '2']) {
    it(`is answered from the blocks or 504, never sent to the store (--workers ${workers})`, async () => {
      const s = await recordingStore();
      const g = await startS3Gw(s, ['--s3-revalidate', '60s', '--s3-block-size', '1MiB', '--workers', workers]);
      const cred = await g.issue(`${BUCKET}/run42/`);
      const key = `/${BUCKET}/run42/warm.bin`;
      // Block 1 stored, its version trusted for 60 s.
      for (let i = 0; i < 2; i++) {
        const warm = await send(g.gw, cred, 'GET', key, { headers: { ...close, range: 'bytes=1500000-1500099' } });
        expect([warm.status, warm.body]).toEqual([206, bytes(1500000, 1500099)]);
      }
      await sleep(300);
      const held = await send(g.gw, cred, 'GET', key, { headers: { ...OIC, range: 'bytes=1048576-1048675' } });
      expect(held.status, 'plain only-if-cached on a stored block').toBe(206);
      const bad: string[] = [];
      const rows: [string, Record<string, string>][] = [
        ['Cache-Control: only-if-cached, no-cache', { 'cache-control': 'only-if-cached, no-cache' }],
        ['Cache-Control: only-if-cached, max-age=0', { 'cache-control': 'only-if-cached, max-age=0' }],
        ['Cache-Control: no-cache + Cache-Control: only-if-cached (two headers)', { 'cache-control': ['no-cache', 'only-if-cached'] as unknown as string }],
        ['Cache-Control: only-if-cached + Pragma: no-cache', { 'cache-control': 'only-if-cached', pragma: 'no-cache' }],
        ['Cache-Control: ONLY-IF-CACHED, NO-CACHE', { 'cache-control': 'ONLY-IF-CACHED, NO-CACHE' }],
        ['Cache-Control: only-if-cached + Origin', { 'cache-control': 'only-if-cached', origin: 'https://app.example' }],
        ['Cache-Control: only-if-cached + If-None-Match', { 'cache-control': 'only-if-cached', 'if-none-match': '"x"' }],
      ];
      for (const [name, extra] of rows) {
        const before = s.seen.length;
        const r = await send(g.gw, cred, 'GET', key, { headers: { ...close, ...extra, range: 'bytes=1500000-1500099' } });
        await sleep(100);
        const asked = s.seen.slice(before);
        if (asked.length !== 0 || ![206, 504].includes(r.status) || (r.status === 206 && r.body !== bytes(1500000, 1500099))) {
          bad.push(`${name}: ${r.status} (${String(r.headers['cache-status'])}); store saw ${JSON.stringify(asked)}`);
        }
      }
      expect(bad, bad.join('\n')).toEqual([]);
    }, 60_000);
  }
});
