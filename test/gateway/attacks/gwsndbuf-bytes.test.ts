// Attack: "answers are byte-exact whatever the buffer". With the smallest buffer (64KiB, so nearly
// every socket write is partial) and with auto, over one connection and pipelined: memory hits,
// disk hits (mapped from the page cache), relayed misses (no-store, and larger than
// --max-object-size), HEAD, single and suffix ranges, on several connections at once. Every body
// must be the origin's bytes, and the kernel must show the buffer asked for.

import { describe, expect, it } from 'vitest';
import { startTestGateway } from '../helpers/gateway.ts';
import { startOrigin } from '../helpers/origin.ts';
import { get, noise, open, readAnswers, sendBufferOf, sha } from './gwsndbuf-lib.ts';

const SMALL = noise(700 * 1024, 11); // memory (--mem-object-max 1MiB)
const BIG = noise(3 * 2 ** 20 + 123, 12); // disk
const NOSTORE = noise(2 * 2 ** 20 + 7, 13); // relayed every time
const HUGE = noise(5 * 2 ** 20 + 1, 14); // over --max-object-size: passes through

async function setup(sendBuffer: string | number) {
  const origin = await startOrigin();
  const serve = (path: string, body: Buffer, cc: string) =>
    origin.route(path, (_req, res) => {
      res.writeHead(200, { 'cache-control': cc, 'content-length': body.length, 'content-type': 'application/octet-stream' });
      res.end(body);
    });
  serve('/small', SMALL, 'max-age=3600');
  serve('/big', BIG, 'max-age=3600');
  serve('/nostore', NOSTORE, 'no-store');
  serve('/huge', HUGE, 'max-age=3600');
  const gw = await startTestGateway({ upstream: [`o=${origin.url}`], sendBuffer, maxObjectSize: 4 * 2 ** 20 });
  const port = Number(new URL(gw.url).port);
  // warm: one plain read of each cacheable object, so the next ones are hits
  for (const p of ['/small', '/big']) {
    const s = await open(port);
    s.write(get(p));
    const [a] = await readAnswers(s, 1);
    expect(a!.status).toBe(200);
    s.destroy();
  }
  return { port };
}

interface Want {
  req: string;
  head?: boolean;
  status: number;
  body: Buffer;
  detail?: RegExp;
}

const wants: Want[] = [
  { req: get('/small'), status: 200, body: SMALL, detail: /hit/ },
  { req: get('/big'), status: 200, body: BIG, detail: /hit/ },
  { req: get('/nostore'), status: 200, body: NOSTORE },
  { req: `HEAD /big HTTP/1.1\r\nHost: x\r\n\r\n`, head: true, status: 200, body: Buffer.alloc(0) },
  { req: get('/big', 'Range: bytes=1000-2000000\r\n'), status: 206, body: BIG.subarray(1000, 2000001) },
  { req: get('/small', 'Range: bytes=-70000\r\n'), status: 206, body: SMALL.subarray(SMALL.length - 70000) },
  { req: get('/huge'), status: 200, body: HUGE },
  { req: get('/big', 'Range: bytes=3000000-\r\n'), status: 206, body: BIG.subarray(3000000) },
  { req: get('/small'), status: 200, body: SMALL, detail: /hit/ },
];

async function pipelined(port: number) {
  const s = await open(port);
  s.write(wants.map((w) => w.req).join(''));
  const answers = await readAnswers(s, wants.length, wants.map((w) => w.head === true));
  const tb = sendBufferOf(port, s.localPort!);
  s.destroy();
  return { answers, tb };
}

function check(answers: Awaited<ReturnType<typeof pipelined>>['answers']) {
  answers.forEach((a, i) => {
    const w = wants[i]!;
    expect({ i, req: w.req.split('\r\n')[0], status: a.status }).toEqual({ i, req: w.req.split('\r\n')[0], status: w.status });
    expect({ i, len: a.body.length, sha: sha(a.body) }).toEqual({ i, len: w.body.length, sha: sha(w.body) });
    if (w.head) expect(a.headers['content-length']).toBe(String(BIG.length));
    if (w.detail) expect(a.headers['cache-status']).toMatch(w.detail);
  });
}

describe('byte-exact answers whatever the send buffer', () => {
  for (const [name, setting, tb] of [
    ['64KiB (the smallest)', 65536, 131072],
    ['auto (loopback: near)', 'auto', 2 * 512 * 1024],
  ] as const) {
    it(`${name}: pipelined hits, misses, HEAD and ranges on 4 connections at once`, async () => {
      const { port } = await setup(setting);
      const results = await Promise.all([pipelined(port), pipelined(port), pipelined(port), pipelined(port)]);
      for (const r of results) {
        check(r.answers);
        expect(r.tb).toBe(tb);
      }
    }, 30_000);
  }
});
