// Attack: many clients joining one fill with different validators, GET and HEAD, over the proxy
// (reverse and forward mode) against an origin written here that evaluates conditionals itself
// (RFC 9110 §13.2.2 order: If-Match, If-Unmodified-Since, If-None-Match, If-Modified-Since, If-Range).
//
// docs/CACHING.md ("Revalidation, conditional requests"): conditional requests are answered 304
// "from the response a fill brings: a first read that names the version it holds gets 304, as
// from the origin"; If-Match is evaluated against the response the answer comes from; If-Range
// with the strong ETag or the exact Last-Modified is honoured. ("Collapsed forwarding") a response
// that may not be stored is given to the one client that started the fetch; the others ask upstream.
// Expected: every client gets what the origin gives the same request (status; for 200/206 the
// exact bytes), whether the answer is storable, `no-store`, or larger than --max-object-size.

import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { startGateway } from './gateway-lib.ts';
import { tempDir } from '../../helpers/tmp.ts';

afterAll(runTeardowns);

const SIZE = 3 << 20;
const BODY = Buffer.alloc(SIZE);
for (let i = 0; i < SIZE; i++) BODY[i] = 0x30 + (Math.floor(i / 3) % 40);
const ETAG = '"v1-abc"';
const LM = 'Tue, 24 Nov 2026 10:00:00 GMT';
const lmT = Date.parse(LM);

type Req = { method: string; headers: Record<string, string> };
/** What an origin answers `r`: status and [start, end] of the body (or none). */
function originAnswer(r: Req): { status: number; range?: [number, number] } {
  const h = r.headers;
  const tags = (v: string) => v.split(',').map((t) => t.trim());
  const weakEq = (t: string) => t === '*' || t.replace(/^W\//, '') === ETAG;
  if (h['if-match'] !== undefined && !tags(h['if-match']).some((t) => t === '*' || t === ETAG)) return { status: 412 };
  if (h['if-match'] === undefined && h['if-unmodified-since'] !== undefined && lmT > Date.parse(h['if-unmodified-since'])) return { status: 412 };
  if (h['if-none-match'] !== undefined) {
    if (tags(h['if-none-match']).some(weakEq)) return { status: 304 };
  } else if (h['if-modified-since'] !== undefined && lmT <= Date.parse(h['if-modified-since'])) return { status: 304 };
  const m = /^bytes=(\d+)-(\d+)$/.exec(h.range ?? '');
  if (m && (h['if-range'] === undefined || h['if-range'] === ETAG || h['if-range'] === LM)) return { status: 206, range: [Number(m[1]), Math.min(Number(m[2]), SIZE - 1)] };
  return { status: 200, range: [0, SIZE - 1] };
}

async function origin(cacheControl: string): Promise<{ port: number; count: () => number }> {
  let n = 0;
  const srv = http.createServer((req, res) => {
    n++;
    const a = originAnswer({ method: req.method!, headers: req.headers as Record<string, string> });
    const base = { etag: ETAG, 'last-modified': LM, 'cache-control': cacheControl, 'content-type': 'application/octet-stream', 'accept-ranges': 'bytes' };
    if (!a.range) return void res.writeHead(a.status, base).end();
    const [s, e] = a.range;
    res.writeHead(a.status, { ...base, 'content-length': e - s + 1, ...(a.status === 206 ? { 'content-range': `bytes ${s}-${e}/${SIZE}` } : {}) });
    if (req.method === 'HEAD') return void res.end();
    // Slow: the head and a first piece at once, the rest after 600 ms, so later clients join.
    const body = BODY.subarray(s, e + 1);
    res.write(body.subarray(0, 1000));
    setTimeout(() => res.end(body.subarray(1000)), 600);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  onTeardown(() => new Promise<void>((r) => { srv.closeAllConnections(); srv.close(() => r()); }));
  return { port: (srv.address() as { port: number }).port, count: () => n };
}

function get(port: number, path: string, r: Req): Promise<{ status: number; body: Buffer; cs: string; complete: boolean }> {
  return new Promise((resolve) => {
    const q = http.request({ host: '127.0.0.1', port, method: r.method, path, headers: r.headers, agent: false }, (res) => {
      const c: Buffer[] = [];
      res.on('data', (d: Buffer) => c.push(d));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(c), cs: String(res.headers['cache-status']), complete: res.complete }));
      res.on('error', () => resolve({ status: res.statusCode!, body: Buffer.concat(c), cs: 'error', complete: false }));
    });
    q.on('error', (e) => resolve({ status: 0, body: Buffer.alloc(0), cs: e.message, complete: false }));
    q.end();
  });
}

const FUTURE = 'Wed, 25 Nov 2026 10:00:00 GMT';
const PAST = 'Mon, 23 Nov 2026 10:00:00 GMT';
const CLIENTS: Req[] = [
  { method: 'GET', headers: {} },
  { method: 'GET', headers: { 'if-none-match': ETAG } },
  { method: 'GET', headers: { 'if-none-match': '"v2"' } },
  { method: 'GET', headers: { 'if-none-match': `W/${ETAG}` } },
  { method: 'GET', headers: { 'if-none-match': `"v0", ${ETAG}` } },
  { method: 'GET', headers: { 'if-none-match': '*' } },
  { method: 'GET', headers: { 'if-match': '"v2"' } },
  { method: 'GET', headers: { 'if-match': ETAG } },
  { method: 'GET', headers: { 'if-match': ETAG, 'if-none-match': ETAG } },
  { method: 'GET', headers: { 'if-modified-since': FUTURE } },
  { method: 'GET', headers: { 'if-modified-since': PAST } },
  { method: 'GET', headers: { 'if-unmodified-since': PAST } },
  { method: 'GET', headers: { 'if-none-match': ETAG, range: 'bytes=0-9' } },
  { method: 'GET', headers: { 'if-none-match': '"v2"', 'if-modified-since': FUTURE } },
  { method: 'GET', headers: { range: 'bytes=100-199', 'if-range': ETAG } },
  { method: 'GET', headers: { range: 'bytes=100-199', 'if-range': '"v2"' } },
  { method: 'GET', headers: { range: 'bytes=2000000-2000099' } },
  { method: 'HEAD', headers: { 'if-none-match': ETAG } },
  { method: 'HEAD', headers: { 'if-match': '"v2"' } },
  { method: 'HEAD', headers: {} },
];

describe('clients joining one fill with different validators', () => {
  for (const mode of ['reverse', 'forward'] as const) {
    for (const kind of ['storable', 'no-store', 'too large'] as const) {
      // Forward mode differs from reverse only in how the target is found: two leaders there.
      for (const leader of mode === 'reverse' ? [0, 1, 6, 14, 16, 17] : [0, 14]) {
        it(`${mode}, ${kind}, the fill started by client ${leader}: every answer is the origin's`, async () => {
          const o = await origin(kind === 'no-store' ? 'no-store' : 'max-age=60');
          const dir = await tempDir('estuary-atk-map8-');
          const args = ['--cache-dir', dir, '--mem-object-max', '0', ...(kind === 'too large' ? ['--max-object-size', '1MiB'] : [])];
          const g = await startGateway(mode === 'reverse' ? [...args, '--upstream', `o=http://127.0.0.1:${o.port}`] : [...args, '--allow-dest', '127.0.0.0/8']);
          const path = mode === 'reverse' ? '/obj' : `http://127.0.0.1:${o.port}/obj`;
          const first = get(g.port, path, CLIENTS[leader]!);
          await new Promise((r) => setTimeout(r, 200));
          const rest = await Promise.all(CLIENTS.map((c, i) => (i === leader ? first : get(g.port, path, c))));
          const bad: string[] = [];
          rest.forEach((got, i) => {
            const c = CLIENTS[i]!;
            const want = originAnswer(c);
            const wantBody = want.range && c.method === 'GET' ? BODY.subarray(want.range[0], want.range[1] + 1) : Buffer.alloc(0);
            if (got.status !== want.status || ((want.status === 200 || want.status === 206) && (!got.body.equals(wantBody) || !got.complete))) {
              bad.push(`${i}${i === leader ? ' (leader)' : ''} ${c.method} ${JSON.stringify(c.headers)}: want ${want.status} ${wantBody.length}, got ${got.status} ${got.body.length}${got.complete ? '' : ' cut'} (${got.cs})`);
            }
          });
          expect(bad, bad.join('\n')).toEqual([]);
        }, 60_000);
      }
    }
  }
});
