// Attack: ranged and conditional reads of S3 objects the gateway cannot store, against a store
// written here: 206 answers without Content-Length whose body does not match their Content-Range,
// and ranged/conditional readers joining a whole read's fill.
//
// docs/STAGING.md ("Objects the gateway does not store"): a range or a conditional read "is passed
// to the store as the client sent it, and gets the store's 206 or 304: never the whole object";
// docs/CACHING.md (tenets): a 206 passed through without Content-Length whose body does not match
// its Content-Range reaches the client cut.
// Expected: every 206/200 a client receives complete holds exactly the object's bytes at the range
// asked; a short or long store 206 reaches the client incomplete; a ranged joiner of a whole fill
// gets a 206 of its range, a matching If-None-Match a 304.

import http from 'node:http';
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import type { S3Server } from '../../helpers/s3rver.ts';
import { signedHeaders, startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, writeUndelimited } from './s3-harness.ts';

afterAll(runTeardowns);

const SIZE = 4 << 20;
const BIG = Buffer.alloc(SIZE);
for (let i = 0; i < SIZE; i++) BIG[i] = 0x41 + (Math.floor(i / 11) % 26);
const ETAG = '"77777777777777777777777777777777"';

type Bad = 'short' | 'long' | 'ok';
async function store(o: { noStore: boolean; bad: Bad; framing: 'chunked' | 'close'; slowWhole?: boolean }): Promise<S3Server> {
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
      const h = `ETag: ${ETAG}\r\nLast-Modified: Tue, 24 Nov 2026 10:00:00 GMT\r\nAccept-Ranges: bytes\r\nContent-Type: application/octet-stream\r\n${o.noStore ? 'Cache-Control: no-store\r\n' : ''}`;
      const inm = /\r\nif-none-match: *([^\r]*)/i.exec(head)?.[1];
      if (inm === ETAG) return void s.write(`HTTP/1.1 304 Not Modified\r\n${h}\r\n`);
      if (method === 'HEAD') return void s.write(`HTTP/1.1 200 OK\r\n${h}Content-Length: ${SIZE}\r\n\r\n`);
      const m = /\r\nrange: bytes=(\d+)-(\d+)/i.exec(head);
      if (!m) {
        s.write(`HTTP/1.1 200 OK\r\n${h}Content-Length: ${SIZE}\r\n\r\n`);
        s.write(BIG.subarray(0, 65536));
        if (o.slowWhole) setTimeout(() => s.write(BIG.subarray(65536)), 700);
        else s.write(BIG.subarray(65536));
        return;
      }
      const start = Number(m[1]);
      const end = Math.min(Number(m[2]), SIZE - 1);
      const whole = BIG.subarray(start, end + 1);
      const body = o.bad === 'short' ? whole.subarray(0, Math.floor(whole.length / 2)) : o.bad === 'long' ? Buffer.concat([whole, BIG.subarray(0, 64)]) : whole;
      const status = `206 Partial Content\r\nContent-Range: bytes ${start}-${end}/${SIZE}`;
      writeUndelimited(s, status, h, body, o.framing);
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  const stop = () => new Promise<void>((r) => srv.close(() => r()));
  onTeardown(stop);
  return { kind: 's3rver', endpoint: `http://127.0.0.1:${port}`, port, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', region: 'us-east-1', dataDir: '', stop, kill: stop };
}

interface Got { status: number; body: Buffer; complete: boolean; cs: string }
function read(gw: string, cred: Parameters<typeof signedHeaders>[1], path: string, extra: Record<string, string>): Promise<Got> {
  const u = new URL(gw);
  return new Promise((resolve) => {
    const q = http.request({ host: u.hostname, port: u.port, path, headers: signedHeaders(gw, cred, 'GET', path, extra), agent: false }, (res) => {
      const c: Buffer[] = [];
      let done = false;
      const fin = (ok: boolean) => {
        if (done) return;
        done = true;
        const body = Buffer.concat(c);
        const cl = res.headers['content-length'];
        resolve({ status: res.statusCode!, body, complete: ok && (cl === undefined || Number(cl) === body.length), cs: String(res.headers['cache-status']) });
      };
      res.on('data', (d: Buffer) => c.push(d));
      res.on('end', () => fin(res.complete));
      res.on('aborted', () => fin(false));
      res.on('error', () => fin(false));
      res.on('close', () => fin(false));
    });
    q.on('error', () => resolve({ status: 0, body: Buffer.alloc(0), complete: false, cs: 'error' }));
    q.end();
  });
}

const SETUPS: [string, string[], boolean][] = [
  ['no-store metadata', ['--s3-block-size', '1MiB'], true],
  ['--max-object-size 1MiB, blocks off', ['--max-object-size', '1MiB', '--s3-block-size', '0'], false],
  ['--max-object-size 512KiB, 1 MiB blocks', ['--max-object-size', '512KiB', '--s3-block-size', '1MiB'], false],
];

describe('store 206 without Content-Length that does not match its Content-Range, object unstorable', () => {
  for (const [name, args, noStore] of SETUPS) {
    for (const bad of ['short', 'long'] as const) {
      for (const framing of ['chunked', 'close'] as const) {
        it(`${name}: a ${bad} ${framing} 206 reaches the client incomplete`, async () => {
          const s = await store({ noStore, bad, framing });
          const g = await startS3Gw(s, ['--s3-revalidate', '60s', ...args]);
          const cred = await g.issue(`${BUCKET}/run42/`);
          const key = `/${BUCKET}/run42/unstorable.bin`;
          const wrong: string[] = [];
          for (const [a, b] of [[100, 199], [1_500_000, 1_600_000], [0, SIZE - 1]]) {
            for (let i = 0; i < 2; i++) {
              const r = await read(g.gw, cred, key, { range: `bytes=${a}-${b}` });
              if (r.complete && (r.status === 200 || r.status === 206)) {
                const want = r.status === 200 ? BIG : BIG.subarray(a!, b! + 1);
                if (!r.body.equals(want)) wrong.push(`${a}-${b}: complete ${r.status} of ${r.body.length} bytes (want ${want.length}; ${r.cs})`);
              }
            }
          }
          expect(wrong, wrong.join('\n')).toEqual([]);
        }, 60_000);
      }
    }
  }
});

describe('ranged and conditional readers joining a whole read of an unstorable object', () => {
  for (const [name, args, noStore] of SETUPS) {
    it(`${name}: each joiner gets the store's answer to its own request`, async () => {
      const s = await store({ noStore, bad: 'ok', framing: 'chunked', slowWhole: true });
      const g = await startS3Gw(s, ['--s3-revalidate', '60s', ...args]);
      const cred = await g.issue(`${BUCKET}/run42/`);
      const key = `/${BUCKET}/run42/joined.bin`;
      const leader = read(g.gw, cred, key, {});
      await new Promise((r) => setTimeout(r, 250));
      const joiners: [Record<string, string>, number, Buffer][] = [
        [{ range: 'bytes=100-199' }, 206, BIG.subarray(100, 200)],
        [{ range: 'bytes=3000000-3000099' }, 206, BIG.subarray(3_000_000, 3_000_100)],
        [{ 'if-none-match': ETAG }, 304, Buffer.alloc(0)],
        [{ range: 'bytes=100-199', 'if-range': ETAG }, 206, BIG.subarray(100, 200)],
        [{ range: 'bytes=100-199', 'if-match': ETAG }, 206, BIG.subarray(100, 200)],
      ];
      const got = await Promise.all(joiners.map(([h]) => read(g.gw, cred, key, h)));
      const l = await leader;
      const wrong: string[] = [];
      if (l.status !== 200 || !l.body.equals(BIG)) wrong.push(`leader: ${l.status} ${l.body.length}`);
      got.forEach((r, i) => {
        const [h, st, body] = joiners[i]!;
        if (r.status !== st || (st !== 304 && (!r.body.equals(body) || !r.complete))) wrong.push(`${JSON.stringify(h)}: want ${st} ${body.length}, got ${r.status} ${r.body.length}${r.complete ? '' : ' cut'} (${r.cs})`);
      });
      expect(wrong, wrong.join('\n')).toEqual([]);
    }, 60_000);
  }
});
