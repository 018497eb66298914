// Attack: a store answer without Content-Length (chunked, or delimited by the connection's close)
// that ends early, for block reads and whole reads of an S3 object.
//
// docs/STAGING.md ("Every block is checked"): a block's answer "is stored (and sent on) only when it
// is a 206 whose ETag is that ETag and whose Content-Range is exactly that block of an object of
// that size". A close-delimited body that is cut looks complete to HTTP/1.1 (RFC 9112 §6.3 item 8),
// so only the Content-Range / HEAD size tells it is short. The first read of each cut answer gets
// what the store sent; what matters is what is stored and served to the next readers.
// Expected: no reader is ever given a 206/200 whose body is not exactly the object's bytes at the
// range asked; a short answer is not stored (the next read asks the store again).

import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import type { S3Server } from '../../helpers/s3rver.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, send, writeUndelimited } from './s3-harness.ts';

afterAll(runTeardowns);

const SIZE = 4 << 20;
const BIG = Buffer.alloc(SIZE);
for (let i = 0; i < SIZE; i++) BIG[i] = 0x41 + (Math.floor(i / 7) % 26);
const ETAG = '"55555555555555555555555555555555"';

/** A store whose GET answers have no Content-Length: `chunked` or close-delimited, cut at `cut` of the body while `cutting`. */
async function store(framing: 'chunked' | 'close'): Promise<S3Server & { gets: () => number; cutting: (on: boolean) => void }> {
  let gets = 0;
  let cut = true;
  const srv = net.createServer((s) => {
    s.on('error', () => {});
    let buf = '';
    s.on('data', (d) => {
      buf += d.toString('latin1');
      const he = buf.indexOf('\r\n\r\n');
      if (he === -1) return;
      const head = buf.slice(0, he);
      buf = buf.slice(he + 4);
      const method = head.split(' ')[0];
      const h = `ETag: ${ETAG}\r\nLast-Modified: Tue, 24 Nov 2026 10:00:00 GMT\r\nAccept-Ranges: bytes\r\nContent-Type: application/octet-stream\r\n`;
      if (method === 'HEAD') return void s.write(`HTTP/1.1 200 OK\r\n${h}Content-Length: ${SIZE}\r\n\r\n`);
      gets++;
      const m = /\r\nrange: bytes=(\d+)-(\d+)/i.exec(head);
      const start = m ? Number(m[1]) : 0;
      const end = m ? Math.min(Number(m[2]), SIZE - 1) : SIZE - 1;
      const whole = BIG.subarray(start, end + 1);
      const body = cut ? whole.subarray(0, Math.floor(whole.length / 2)) : whole;
      const status = m ? `206 Partial Content\r\nContent-Range: bytes ${start}-${end}/${SIZE}` : '200 OK';
      writeUndelimited(s, status, h, body, framing);
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  const stop = () => new Promise<void>((r) => srv.close(() => r()));
  onTeardown(stop);
  return {
    kind: 's3rver', endpoint: `http://127.0.0.1:${port}`, port, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', region: 'us-east-1', dataDir: '',
    stop, kill: stop, gets: () => gets, cutting: (on) => (cut = on),
  };
}

const latin = (b: Buffer) => b.toString('latin1');

for (const framing of ['chunked', 'close'] as const) {
  describe(`store answers without Content-Length (${framing}), cut short`, () => {
    it('never serve a later reader short or shifted bytes, blocks and whole', async () => {
      const s = await store(framing);
      const g = await startS3Gw(s, ['--s3-revalidate', '60s', '--s3-block-size', '1MiB']);
      const cred = await g.issue(`${BUCKET}/run42/`);
      const key = `/${BUCKET}/run42/undelimited.bin`;
      const bad: string[] = [];
      const check = (what: string, r: { status: number; body: string; headers: Record<string, unknown> }, start: number, end: number) => {
        if ((r.status === 206 || r.status === 200) && r.body !== latin(BIG.subarray(start, end + 1))) {
          bad.push(`${what}: ${r.status} ${r.body.length} bytes (${String(r.headers['cache-status'])})`);
        }
      };
      // First readers: the store cuts every answer in half.
      for (const [a, b] of [[0, 99], [900_000, 900_099]]) {
        const r = await send(g.gw, cred, 'GET', key, { headers: { range: `bytes=${a}-${b}` } }).catch(() => undefined);
        if (r) check(`first range ${a}-${b}`, r, a, b);
      }
      const w = await send(g.gw, cred, 'GET', `${key}?x-id=GetObject`).catch(() => undefined);
      // A whole answer without a length ends where the store ended it, and nothing can tell it
      // short: it is passed on as the store sent it, and never stored.
      if (w?.status === 200) expect(String(w.headers['cache-status'])).toMatch(/detail=no-length/);
      // Later readers: the store now answers in full; nothing short may be served from the cache.
      s.cutting(false);
      for (const [a, b] of [[0, 99], [900_000, 900_099], [600_000, 600_099], [3_000_000, 3_000_099]]) {
        const r = await send(g.gw, cred, 'GET', key, { headers: { range: `bytes=${a}-${b}` } });
        check(`later range ${a}-${b}`, r, a, b);
      }
      const later = await send(g.gw, cred, 'GET', key);
      check('later whole read', later, 0, SIZE - 1);
      expect(bad, bad.join('\n')).toEqual([]);
    }, 90_000);
  });
}
