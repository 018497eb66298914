// Attack: the proxy's answers to ranged and conditional first readers of objects that may not be
// stored (`no-store`, `private`, over --max-object-size), and HEADs answered from such fills.
//
// docs/CACHING.md: an unstorable response "is given to the one client whose request started the
// fetch; the others ask upstream on their own … When that client asked for a range or
// conditionally (`Range`, `If-Range`, `If-None-Match`, `If-Modified-Since`), the whole answer the
// fill asked for is not its answer: it is let go and the client's own request goes upstream, so it
// gets the origin's 206 or 304." "A HEAD answered from a fill that could not be stored gets the
// head only; the body is not read from the origin for it, nor counted as sent."
// Expected: the origin receives each client's own request (its Range and validators as sent); the
// fill's whole 200 is let go (its origin response ends, it is not read to the end); the client
// gets the origin's 206/304; /metrics counts only bytes the clients got; a keep-alive connection
// that carried such a HEAD serves the next request.

import http from 'node:http';
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { get, metric, origin } from './disk-lib.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { pattern, sleep, startGateway as start } from './gateway-lib.ts';

const startGateway = async (args: string[]) => start(['--cache-dir', await tempDir('estuary-atk-map9-'), ...args]);

afterAll(runTeardowns);

const SIZE = 3 << 20;
const BODY = pattern(SIZE, 9);
const LM = 'Tue, 24 Nov 2026 10:00:00 GMT';

interface Asked { path: string; method: string; range?: string; ifRange?: string; inm?: string; ims?: string; done?: 'finished' | 'closed' }

/** An origin evaluating conditionals as RFC 9110 §13.2.2 says, sending whole bodies slowly. */
async function conditionalOrigin(asked: Asked[]): Promise<number> {
  let version = 'v1';
  return origin((req, res) => {
    const path = req.url!;
    const a: Asked = { path, method: req.method!, range: req.headers.range, ifRange: req.headers['if-range'] as string | undefined, inm: req.headers['if-none-match'] as string | undefined, ims: req.headers['if-modified-since'] };
    asked.push(a);
    if (path === '/set-v2') { version = 'v2'; res.end('ok'); return; }
    res.on('finish', () => (a.done ??= 'finished'));
    res.on('close', () => (a.done ??= 'closed'));
    const mode = /mode=([a-z-]+)/.exec(path)?.[1] ?? 'no-store';
    const cc = mode === 'no-store' ? 'no-store' : mode === 'private' ? 'private, max-age=60' : mode === 'stale' ? (version === 'v1' ? 'max-age=1' : 'no-store') : 'max-age=60';
    const etag = `"${mode === 'stale' ? version : 'v1'}"`;
    const body = mode === 'small' ? BODY.subarray(0, 1000) : BODY;
    const h: Record<string, string> = { 'cache-control': cc, etag, 'last-modified': LM, 'content-type': 'application/octet-stream', 'accept-ranges': 'bytes' };
    const inm = req.headers['if-none-match'];
    const ims = req.headers['if-modified-since'];
    if (inm !== undefined ? inm.split(',').map((x) => x.trim()).some((x) => x === etag || x === '*') : ims !== undefined && Date.parse(ims) >= Date.parse(LM)) {
      res.writeHead(304, h).end();
      return;
    }
    const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
    const ir = req.headers['if-range'];
    if (range && (ir === undefined || ir === etag)) {
      const [s, e] = [Number(range[1]), Number(range[2])];
      res.writeHead(206, { ...h, 'content-range': `bytes ${s}-${e}/${body.length}`, 'content-length': String(e - s + 1) }).end(body.subarray(s, e + 1));
      return;
    }
    res.writeHead(200, { ...h, 'content-length': String(body.length) });
    if (req.method === 'HEAD') { res.end(); return; }
    let off = 0;
    const tick = () => {
      if (res.destroyed) return;
      if (off >= body.length) { res.end(); return; }
      res.write(body.subarray(off, off + 65536));
      off += 65536;
      setTimeout(tick, 15);
    };
    tick();
  });
}

const sentNow = (port: number) => metric(port, 'estuary_gateway_bytes_sent_total');

describe('ranged and conditional first readers of an unstorable object (reverse proxy)', () => {
  for (const mode of ['no-store', 'private', 'too-large'] as const) {
    it(`each leader gets the origin's answer to its own request, and the fill's whole GET is let go (${mode})`, async () => {
      const asked: Asked[] = [];
      const port = await conditionalOrigin(asked);
      const g = await startGateway(['--upstream', `default=http://127.0.0.1:${port}`, '--max-object-size', '2MiB', '--mem-object-max', '0']);
      const m = mode === 'too-large' ? 'big' : mode;
      const cases: [string, Record<string, string>, number, number][] = [
        ['range', { range: 'bytes=100-199' }, 206, 100],
        ['range + If-Range', { range: 'bytes=2000000-2000099', 'if-range': '"v1"' }, 206, 100],
        ['range + unquoted If-Range', { range: 'bytes=300-399', 'if-range': 'v1' }, -1, -1],
        ['If-None-Match', { 'if-none-match': '"v1"' }, 304, 0],
        ['If-Modified-Since', { 'if-modified-since': 'Wed, 25 Nov 2026 10:00:00 GMT' }, 304, 0],
        ['range + stale If-Range', { range: 'bytes=0-9', 'if-range': '"v0"' }, 200, SIZE],
      ];
      const bad: string[] = [];
      let delivered = 0;
      const before = await sentNow(g.port);
      for (const [i, [name, headers, status, length]] of cases.entries()) {
        const path = `/obj-${i}?mode=${m}`;
        const r = await get(g.port, path, headers);
        delivered += r.body.length;
        const mine = asked.filter((a) => a.path === path);
        const own = mine.find((a) => a.range === headers.range && a.ifRange === headers['if-range'] && a.inm === headers['if-none-match'] && a.ims === headers['if-modified-since']);
        if (!own) bad.push(`${name}: the origin never got the client's own request: ${JSON.stringify(mine)}`);
        if (status !== -1 && (r.status !== status || r.body.length !== length)) bad.push(`${name}: ${r.status} with ${r.body.length} bytes (${String(r.headers['cache-status'])}), want ${status} with ${length}`);
        if (r.status === 206 && !r.body.equals(BODY.subarray(Number(/bytes=(\d+)/.exec(headers.range!)![1]), Number(/bytes=(\d+)/.exec(headers.range!)![1]) + 100))) bad.push(`${name}: wrong bytes`);
      }
      await sleep(1500);
      const sent = (await sentNow(g.port)) - before;
      if (sent !== delivered) bad.push(`bytes_sent grew by ${sent}, clients got ${delivered}`);
      const open = asked.filter((a) => a.done === undefined);
      if (open.length) bad.push(`origin answers still open (not read, not closed): ${JSON.stringify(open)}`);
      const wholeRead = asked.filter((a) => a.method === 'GET' && a.range === undefined && a.inm === undefined && a.ims === undefined && a.done === 'finished');
      if (wholeRead.length) bad.push(`the fill's whole GET was read to the end ${wholeRead.length} times: ${wholeRead.map((a) => a.path).join(', ')}`);
      expect(bad, bad.join('\n')).toEqual([]);
    }, 90_000);
  }

  it('many joiners of an unstorable fill each get the origin answer to their own request', async () => {
    const asked: Asked[] = [];
    const port = await conditionalOrigin(asked);
    const g = await startGateway(['--upstream', `default=http://127.0.0.1:${port}`, '--mem-object-max', '0']);
    const path = '/joined?mode=no-store';
    const leader = get(g.port, path, {});
    await sleep(150);
    const joiners = Array.from({ length: 16 }, (_, i) =>
      i % 4 === 3 ? get(g.port, path, { 'if-none-match': '"v1"' }) : get(g.port, path, { range: `bytes=${i * 1000}-${i * 1000 + 99}` }),
    );
    const [l, ...js] = await Promise.all([leader, ...joiners]);
    const bad: string[] = [];
    if (l.status !== 200 || !l.body.equals(BODY)) bad.push(`leader: ${l.status} ${l.body.length} bytes`);
    js.forEach((r, i) => {
      if (i % 4 === 3) {
        if (r.status !== 304 || r.body.length) bad.push(`joiner ${i} If-None-Match: ${r.status} ${r.body.length} bytes (${String(r.headers['cache-status'])})`);
      } else if (r.status !== 206 || !r.body.equals(BODY.subarray(i * 1000, i * 1000 + 100))) {
        bad.push(`joiner ${i} range: ${r.status} ${r.body.length} bytes (${String(r.headers['cache-status'])})`);
      }
    });
    await sleep(1000);
    const open = asked.filter((a) => a.done === undefined);
    if (open.length) bad.push(`origin answers still open: ${open.length}`);
    expect(bad, bad.join('\n')).toEqual([]);
  }, 90_000);
});

/** Sends two requests on one connection, reading the first answer by its framing. */
function twoOnOneConnection(port: number, first: string, second: string): Promise<{ firstHead: string; extra: Buffer; second: string }> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(first));
    let buf = Buffer.alloc(0);
    let stage = 0;
    let firstHead = '';
    let extra = Buffer.alloc(0);
    const timer = setTimeout(() => s.destroy(), 10_000);
    s.on('error', () => {});
    s.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (stage === 0) {
        const i = buf.indexOf('\r\n\r\n');
        if (i < 0) return;
        firstHead = buf.subarray(0, i).toString('latin1');
        stage = 1;
        // A HEAD answer has no body: anything before the next request is sent is extra.
        setTimeout(() => {
          extra = buf.subarray(i + 4);
          buf = Buffer.alloc(0);
          stage = 2;
          s.write(second);
        }, 500);
      }
    });
    s.on('close', () => {
      clearTimeout(timer);
      resolve({ firstHead, extra, second: stage === 2 ? buf.toString('latin1') : '' });
    });
  });
}

describe('a HEAD answered from a revalidation whose new version may not be stored', () => {
  for (const forward of [false, true]) {
    it(`sends only the head, counts nothing, and the connection serves the next request (${forward ? 'forward' : 'reverse'})`, async () => {
      const asked: Asked[] = [];
      const port = await conditionalOrigin(asked);
      const g = await startGateway(forward ? ['--allow-dest', '@loopback', '--mem-object-max', '0'] : ['--upstream', `default=http://127.0.0.1:${port}`, '--mem-object-max', '0']);
      const url = (p: string) => (forward ? `http://127.0.0.1:${port}${p}` : p);
      const path = '/head-obj?mode=stale';
      const warm = await new Promise<number>((r) => http.get(url(path).startsWith('http') ? url(path) : `http://127.0.0.1:${g.port}${path}`, forward ? { host: '127.0.0.1', port: g.port, path: url(path) } : {}, (res) => { res.resume(); res.on('end', () => r(res.statusCode!)); }));
      expect(warm).toBe(200);
      await get(port, '/set-v2');
      await sleep(1600);
      const before = await sentNow(g.port);
      const host = `Host: 127.0.0.1:${forward ? port : g.port}\r\n`;
      const r = await twoOnOneConnection(
        g.port,
        `HEAD ${url(path)} HTTP/1.1\r\n${host}If-Match: "v2"\r\n\r\n`,
        `GET ${url('/small?mode=small')} HTTP/1.1\r\n${host}Connection: close\r\n\r\n`,
      );
      await sleep(1000);
      const sent = (await sentNow(g.port)) - before;
      const bad: string[] = [];
      if (!/^HTTP\/1\.1 200/.test(r.firstHead)) bad.push(`HEAD: ${r.firstHead.split('\r\n')[0]}`);
      if (r.extra.length) bad.push(`${r.extra.length} body bytes after the HEAD's head`);
      if (!/^HTTP\/1\.1 200/.test(r.second) || !r.second.endsWith(BODY.subarray(0, 1000).toString('latin1'))) bad.push(`next request on the connection: ${r.second.slice(0, 80) || '(nothing)'}`);
      if (sent !== 1000) bad.push(`bytes_sent grew by ${sent}, want 1000 (the GET's body only)`);
      const heads = asked.filter((a) => a.path === path);
      const unread = heads.filter((a) => a.done === undefined);
      if (unread.length) bad.push(`origin answers for the HEAD still open: ${JSON.stringify(unread)}`);
      expect(bad, `${bad.join('\n')}\norigin saw ${JSON.stringify(heads)}`).toEqual([]);
    }, 60_000);
  }
});
