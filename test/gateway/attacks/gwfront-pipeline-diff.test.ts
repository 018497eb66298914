// Differential: the same pipelined byte stream to a gateway with the front reader and one with
// --no-front-hits must give the same bytes back (passing regression; requests the full path
// collapses may reach the origin twice with the reader, as documented, so upstream is compared as a set) (Date/Age/ttl aside) and the same requests upstream.
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { onTeardown } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { rawRequest, sleep, startGateway, type Gateway } from './gateway-lib.ts';

async function origin(seen: string[]): Promise<number> {
  const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const u = req.url ?? '';
      seen.push(`${req.method} ${u} ${body.length}`);
      setTimeout(() => {
        res.writeHead(200, { 'cache-control': u.includes('nostore') ? 'no-store' : 'max-age=600', etag: `"${u.length}"`, 'content-type': 'text/plain' });
        res.end(req.method === 'POST' ? `posted ${body}` : `body of ${u} `.repeat(u.includes('big') ? 3000 : 3));
      }, u.includes('slow') ? 150 : 0);
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  onTeardown(() => new Promise<void>((r) => { srv.closeAllConnections(); srv.close(() => r()); }));
  return (srv.address() as net.AddressInfo).port;
}

const H = (t: string, extra = '') => `GET ${t} HTTP/1.1\r\nHost: o\r\n${extra}\r\n`;
const POOL = [
  H('/o/h1'), H('/o/h2'), H('/o/big1'), `HEAD /o/h1 HTTP/1.1\r\nHost: o\r\n\r\n`,
  H('/o/h1', 'Range: bytes=2-5\r\n'), H('/o/h2', 'If-None-Match: "5"\r\n'), H('/o/h1', 'Cache-Control: max-age=0\r\n'), H('/o/slowx', 'Cache-Control: no-cache\r\n'),
  'POST /o/p HTTP/1.1\r\nHost: o\r\nContent-Length: 3\r\n\r\nabc',
  'GET /o/h1 HTTP/1.0\r\nHost: o\r\nConnection: keep-alive\r\n\r\n',
  H('/o/h2', 'Accept: */*\r\nUser-Agent: t\r\nAccept-Encoding: gzip\r\n'),
  H('/o/nostore'), H('/o/h1', 'host: o\r\n'), H('/o/h1', 'X-Other: 1\r\n'),
  'GET http://o/o/h2 HTTP/1.1\r\nHost: o\r\n\r\n',
  'DELETE /o/h3 HTTP/1.1\r\nHost: o\r\n\r\n', H('/o/h3'),
  'POST /o/p2 HTTP/1.1\r\nHost: o\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nxyz\r\n0\r\n\r\n',
  'POST /o/p3 HTTP/1.1\r\nHost: o\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi',
  H('/o/h1', 'Host: other\r\n'), 'GET http://o/o/h1 HTTP/1.1\r\nHost: zzz\r\n\r\n', H('/o/h1', 'Connection: keep-alive\r\n'),
  H('/o/h2', 'Accept: a\r\n b\r\n'), H('/o/h2', 'Accept:\t x \t\r\n'),
  H('/o/h2', 'TE: trailers\r\n'),
  H('/o/big1', 'Range: bytes=0-0\r\n'), `HEAD /o/big1 HTTP/1.1\r\nHost: o\r\n\r\n`, H('/o/h1?q=1'), H('/o/h2', 'Accept-Language: de\r\n'),
  H('/o/h1', 'HOST: o\r\n'), 'GET /o/h1 HTTP/1.1\r\nhOsT: o\r\n\r\n', H('/o/h2', 'Pragma: no-cache\r\n'),
];

function norm(s: string): string {
  return s
    .replace(/(date|Date): [^\r]*/g, '$1: X')
    .replace(/(age|Age): \d+/g, '$1: N')
    .replace(/ttl=\d+/g, 'ttl=N')
    .replace(/\r\n\r\n# HELP[\s\S]*?(?=HTTP\/1|$)/g, '\r\n\r\nMETRICS');
}

function exchange(port: number, pieces: string[]): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    let out = '';
    s.on('data', (d) => (out += d.toString('latin1')));
    s.on('error', () => {});
    const t = setTimeout(() => s.destroy(), 4000);
    s.on('close', () => { clearTimeout(t); resolve(out); });
    s.on('connect', async () => {
      for (const p of pieces) { s.write(p); await sleep(5); }
    });
  });
}

let seed = 12345;
const rnd = (n: number) => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed % n; };

describe('front reader vs --no-front-hits, pipelined', () => {
  it('gives the same bytes and the same upstream requests', async () => {
    const seenOn: string[] = []; const seenOff: string[] = [];
    const gs: Gateway[] = [];
    for (const [seen, flag] of [[seenOn, []], [seenOff, ['--no-front-hits']]] as const) {
      const o = await origin(seen);
      gs.push(await startGateway(['--upstream', `o=http://127.0.0.1:${o}`, '--cache-dir', join(await tempDir(), 'c'), ...flag, ...(process.env.GWF_EXTRA?.split(' ') ?? [])]));
    }
    const [on, off] = gs as [Gateway, Gateway];
    const warm = ['/o/h1', '/o/h2', '/o/big1', '/o/h3'];
    for (const g of [on, off]) for (let i = 0; i < 3; i++) for (const w of warm) await rawRequest(g.port, H(w, 'Connection: close\r\n'));
    const diffs: string[] = [];
    for (let round = 0; round < 70; round++) {
      const reqs = Array.from({ length: 2 + rnd(6) }, () => POOL[rnd(POOL.length)]!);
      if (round % 5 === 4) reqs.splice(1, 0, H(`/o/slow${round}`));
      reqs.push(H('/o/h1', 'Connection: close\r\n'));
      const stream = reqs.join('');
      // Split the same way for both: sometimes at random byte boundaries.
      const pieces: string[] = [];
      if (round % 2 === 0) pieces.push(stream);
      else { let i = 0; while (i < stream.length) { const n = 1 + rnd(60); pieces.push(stream.slice(i, i + n)); i += n; } }
      const before = [seenOn.length, seenOff.length];
      const a = norm(await exchange(on.port, pieces));
      const b = norm(await exchange(off.port, pieces));
      const upA = [...new Set(seenOn.slice(before[0]))].sort().join('|'); const upB = [...new Set(seenOff.slice(before[1]))].sort().join('|');
      if (a !== b) {
        let i = 0;
        while (a[i] === b[i]) i++;
        const from = Math.max(0, a.lastIndexOf('HTTP/1.1 ', i));
        diffs.push(`round ${round} ${JSON.stringify(reqs)}\nFRONT: ${JSON.stringify(a.slice(from, i + 200))}\nNODE:  ${JSON.stringify(b.slice(from, i + 200))}`);
      }
      if (upA !== upB) diffs.push(`round ${round} upstream ${upA} vs ${upB} for ${JSON.stringify(reqs)}`);
      for (const g of [on, off]) for (const w of warm) await rawRequest(g.port, H(w, 'Connection: close\r\n'));
    }
    if (diffs.length) console.log(diffs.join('\n\n'));
    expect(diffs).toEqual([]);
  }, 60_000);
});
