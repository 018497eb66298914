// Attack: request headers on block reads (objects larger than --s3-block-size, read in ranges),
// against a store written here that answers CORS as MinIO does (Access-Control-Allow-Origin naming
// the request's Origin, `Vary: Origin`).
//
// docs/CACHING.md: "`only-if-cached` answers 504 on a miss". docs/STAGING.md ("What a fill asks
// for"): "`Origin` still selects a copy of its own, since a store's CORS headers depend on it".
// Expected: a cold block read with `only-if-cached` gets 504 and sends nothing to the store; a
// block or HEAD answer that carried one client's Origin is never given to a client with another
// Origin or none, with that Origin's Access-Control-* headers.

import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import type { S3Server } from '../../helpers/s3rver.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, send } from './s3-harness.ts';

afterAll(runTeardowns);

const SIZE = 4 << 20;
const BIG = Buffer.alloc(SIZE);
for (let i = 0; i < SIZE; i++) BIG[i] = 0x61 + (Math.floor(i / 5) % 26);
const ETAG = '"66666666666666666666666666666666"';

interface Seen { method: string; range?: string; origin?: string }

async function corsStore(): Promise<S3Server & { seen: Seen[] }> {
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
        seen.push({ method, range, origin });
        let h = `ETag: ${ETAG}\r\nLast-Modified: Tue, 24 Nov 2026 10:00:00 GMT\r\nAccept-Ranges: bytes\r\nContent-Type: application/octet-stream\r\nVary: Origin, Accept-Encoding\r\n`;
        if (origin) h += `Access-Control-Allow-Origin: ${origin}\r\nAccess-Control-Allow-Credentials: true\r\nAccess-Control-Expose-Headers: ETag, x-amz-meta-secret\r\n`;
        if (method === 'HEAD') {
          s.write(`HTTP/1.1 200 OK\r\n${h}Content-Length: ${SIZE}\r\n\r\n`);
          continue;
        }
        const m = range ? /bytes=(\d+)-(\d+)/.exec(range) : null;
        const start = m ? Number(m[1]) : 0;
        const end = m ? Math.min(Number(m[2]), SIZE - 1) : SIZE - 1;
        const status = m ? `206 Partial Content\r\nContent-Range: bytes ${start}-${end}/${SIZE}` : '200 OK';
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

const latin = (b: Buffer) => b.toString('latin1');
const close = { connection: 'close' };

describe('request headers on block reads', () => {
  for (const workers of ['1', '2']) {
    it(`only-if-cached on a cold block read is 504 and asks the store nothing (--workers ${workers})`, async () => {
      const s = await corsStore();
      const g = await startS3Gw(s, ['--s3-revalidate', '60s', '--s3-block-size', '1MiB', '--workers', workers]);
      const cred = await g.issue(`${BUCKET}/run42/`);
      const key = `/${BUCKET}/run42/oic.bin`;
      const r = await send(g.gw, cred, 'GET', key, { headers: { ...close, range: 'bytes=1500000-1500099', 'cache-control': 'only-if-cached' } });
      const w = await send(g.gw, cred, 'GET', `${key}2`, { headers: { ...close, 'cache-control': 'only-if-cached' } });
      expect([r.status, w.status, s.seen.length], `${r.status} ${String(r.headers['cache-status'])} / ${w.status} ${String(w.headers['cache-status'])}; store saw ${JSON.stringify(s.seen)}`).toEqual([504, 504, 0]);
      // Once its block is stored (in this worker's trust: one connection, --workers 1), the same
      // read is answered from it, still without the store.
      if (workers === '1') {
        expect((await send(g.gw, cred, 'GET', key, { headers: { range: 'bytes=1500000-1500099' } })).status).toBe(206);
        const asked = s.seen.length;
        const hit = await send(g.gw, cred, 'GET', key, { headers: { range: 'bytes=1500050-1500149', 'cache-control': 'only-if-cached' } });
        expect([hit.status, hit.body, s.seen.length]).toEqual([206, BIG.subarray(1500050, 1500150).toString('latin1'), asked]);
      }
    }, 60_000);

    for (const first of ['GET', 'HEAD', 'whole GET'] as const) {
      it(`a ${first} with Origin does not lend its CORS headers to other clients' block answers (--workers ${workers})`, async () => {
        const s = await corsStore();
        const g = await startS3Gw(s, ['--s3-revalidate', '60s', '--s3-block-size', '1MiB', '--workers', workers]);
        const cred = await g.issue(`${BUCKET}/run42/`);
        const key = `/${BUCKET}/run42/cors-${first.replace(" ", "-")}.bin`;
        const evil = 'https://evil.example';
        const a = await send(g.gw, cred, first === 'HEAD' ? 'HEAD' : 'GET', key, { headers: { ...close, origin: evil, ...(first === 'GET' ? { range: 'bytes=0-99' } : {}) } });
        expect(a.status).toBe(first === 'GET' ? 206 : 200);
        const bad: string[] = [];
        if (a.headers['access-control-allow-origin'] !== evil) bad.push(`first ${first} with Origin ${evil}: no CORS answer of its own (${String(a.headers['access-control-allow-origin'])}; ${String(a.headers['cache-status'])})`);
        for (let i = 0; i < 6; i++) {
          for (const [origin, range] of [[undefined, 'bytes=10-19'], ['https://good.example', 'bytes=20-29'], [undefined, 'bytes=1048570-1048600']] as const) {
            const r = await send(g.gw, cred, 'GET', key, { headers: { ...close, range, ...(origin ? { origin } : {}) } });
            const [x, y] = range.slice(6).split('-').map(Number) as [number, number];
            if (r.status !== 206 || r.body !== latin(BIG.subarray(x, y + 1))) bad.push(`${range}: ${r.status} wrong bytes`);
            const acao = r.headers['access-control-allow-origin'];
            if (acao !== undefined && acao !== origin) bad.push(`Origin ${origin ?? '(none)'} ${range}: got Access-Control-Allow-Origin ${String(acao)} (${String(r.headers['cache-status'])})`);
            if (origin && acao !== origin) bad.push(`Origin ${origin} ${range}: no CORS answer of its own (${String(acao)}; ${String(r.headers['cache-status'])})`);
          }
        }
        expect(bad, bad.join('\n')).toEqual([]);
      }, 60_000);
    }
  }
});
