// Attack: 206 answers relayed by the proxy (reverse mode) to a ranged first reader of an object that
// may not be stored (no-store): the fill's whole 200 is let go and the client's own Range request
// goes to the origin, whose 206 is relayed as it is (gateway/proxy/relay.ts).
//
// docs/CACHING.md, tenet 1: "A `206` passed through without a `Content-Length` (chunked, or ended
// by the origin's close) that ends short of its `Content-Range`, or runs past it, is cut the same
// way" — so the client sees it incomplete. RFC 9110 §14.1: "Range unit names are
// case-insensitive"; §14.4: Content-Range = range-unit SP (range-resp / unsatisfied-range).
// Expected: a short or long undelimited 206 reaches the client cut (no clean end of its chunked
// body), however its Content-Range spells the unit; a right one arrives complete and exact.
// Spellings a client still reads as a range (curl skips to the first digit) but that are not
// `bytes A-B/N` (extra whitespace, `bytes=`, two Content-Range headers, last before first) cannot be
// checked: such a 206 is cut or refused 502, never relayed as complete.

import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { pattern, rawOrigin, rawRequest, startGateway } from './gateway-lib.ts';

afterAll(runTeardowns);

const SIZE = 1000;
const BODY = pattern(SIZE, 3);

interface Row {
  name: string;
  contentRange: string;
  framing: 'chunked' | 'close' | 'length';
  /** bytes [from, from + n) of BODY are sent */
  from: number;
  n: number;
  /** what the client must see */
  want: 'complete' | 'cut';
}

const rows: Row[] = [
  { name: 'exact, chunked', contentRange: 'bytes 100-199/1000', framing: 'chunked', from: 100, n: 100, want: 'complete' },
  { name: 'exact, close-delimited', contentRange: 'bytes 100-199/1000', framing: 'close', from: 100, n: 100, want: 'complete' },
  { name: 'exact, Content-Length', contentRange: 'bytes 100-199/1000', framing: 'length', from: 100, n: 100, want: 'complete' },
  { name: 'short, chunked', contentRange: 'bytes 100-199/1000', framing: 'chunked', from: 100, n: 60, want: 'cut' },
  { name: 'long, chunked', contentRange: 'bytes 100-199/1000', framing: 'chunked', from: 100, n: 140, want: 'cut' },
  { name: 'short, close-delimited', contentRange: 'bytes 100-199/1000', framing: 'close', from: 100, n: 60, want: 'cut' },
  { name: 'long, close-delimited', contentRange: 'bytes 100-199/1000', framing: 'close', from: 100, n: 140, want: 'cut' },
  { name: 'short, unknown length', contentRange: 'bytes 100-199/*', framing: 'chunked', from: 100, n: 60, want: 'cut' },
  { name: 'short, unit "Bytes"', contentRange: 'Bytes 100-199/1000', framing: 'chunked', from: 100, n: 60, want: 'cut' },
  { name: 'long, unit "BYTES"', contentRange: 'BYTES 100-199/1000', framing: 'chunked', from: 100, n: 140, want: 'cut' },
  { name: 'short, unit "Bytes", close-delimited', contentRange: 'Bytes 100-199/1000', framing: 'close', from: 100, n: 60, want: 'cut' },
  { name: 'short, leading zeros', contentRange: 'bytes 0100-0199/1000', framing: 'chunked', from: 100, n: 60, want: 'cut' },
  // Past 2^53 a Number cannot hold every offset: 100 bytes named by 9007199254740993-...092.
  { name: 'exact, offsets past 2^53', contentRange: 'bytes 9007199254740993-9007199254741092/9007199254741093', framing: 'chunked', from: 100, n: 100, want: 'complete' },
  { name: 'short by one, offsets past 2^53', contentRange: 'bytes 9007199254740992-9007199254741091/9007199254741093', framing: 'chunked', from: 100, n: 99, want: 'cut' },
  // Spellings a client still reads as bytes 100-199 (curl skips to the first digit), that the
  // check's pattern does not take: the body must still be checked, or the 206 refused (502).
  { name: 'short, two spaces after the unit', contentRange: 'bytes  100-199/1000', framing: 'chunked', from: 100, n: 60, want: 'cut' },
  { name: 'short, tab after the unit', contentRange: 'bytes\t100-199/1000', framing: 'chunked', from: 100, n: 60, want: 'cut' },
  { name: 'short, "bytes=" with =', contentRange: 'bytes=100-199/1000', framing: 'chunked', from: 100, n: 60, want: 'cut' },
  { name: 'long, "bytes=" with =', contentRange: 'bytes=100-199/1000', framing: 'chunked', from: 100, n: 140, want: 'cut' },
  { name: 'short, spaces around the dash', contentRange: 'bytes 100 - 199/1000', framing: 'chunked', from: 100, n: 60, want: 'cut' },
  { name: 'short, space before the slash', contentRange: 'bytes 100-199 /1000', framing: 'chunked', from: 100, n: 60, want: 'cut' },
  { name: 'short, two Content-Range headers (same value)', contentRange: 'bytes 100-199/1000\r\nContent-Range: bytes 100-199/1000', framing: 'chunked', from: 100, n: 60, want: 'cut' },
  { name: 'short, close-delimited, two Content-Range headers', contentRange: 'bytes 100-199/1000\r\nContent-Range: bytes 100-199/1000', framing: 'close', from: 100, n: 60, want: 'cut' },
  { name: 'short, 31-digit zero-padded offsets', contentRange: `bytes ${'100'.padStart(31, '0')}-${'199'.padStart(31, '0')}/1000`, framing: 'chunked', from: 100, n: 60, want: 'cut' },
  { name: 'short, last before first', contentRange: 'bytes 199-100/1000', framing: 'chunked', from: 100, n: 60, want: 'cut' },
  { name: 'exact, chunked', contentRange: 'bytes 100-199/1000', framing: 'chunked', from: 100, n: 100, want: 'complete' },
];

/** Reads one HTTP/1.1 answer from a raw socket and says whether its body ended cleanly. */
function get(port: number, path: string, headers: Record<string, string>): Promise<{ status: number; head: string; body: Buffer; clean: boolean }> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => {
      s.write(`GET ${path} HTTP/1.1\r\nHost: origin.test\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}Connection: close\r\n\r\n`);
    });
    let buf = Buffer.alloc(0);
    s.on('data', (d) => (buf = Buffer.concat([buf, d])));
    s.on('error', () => {});
    const timer = setTimeout(() => s.destroy(), 15_000);
    s.on('close', () => {
      clearTimeout(timer);
      const i = buf.indexOf('\r\n\r\n');
      const head = buf.subarray(0, Math.max(i, 0)).toString('latin1');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      let rest = buf.subarray(i + 4);
      const cl = /\r\ncontent-length: *(\d+)/i.exec(head)?.[1];
      if (!/\r\ntransfer-encoding: *chunked/i.test(head)) {
        resolve({ status, head, body: rest, clean: cl !== undefined && rest.length === Number(cl) });
        return;
      }
      const parts: Buffer[] = [];
      let clean = false;
      for (;;) {
        const e = rest.indexOf('\r\n');
        if (e < 0) break;
        const n = parseInt(rest.subarray(0, e).toString('latin1'), 16);
        if (Number.isNaN(n)) break;
        if (n === 0) {
          clean = rest.subarray(e + 2, e + 4).toString('latin1') === '\r\n';
          break;
        }
        if (rest.length < e + 2 + n + 2) {
          parts.push(rest.subarray(e + 2));
          break;
        }
        parts.push(rest.subarray(e + 2, e + 2 + n));
        rest = rest.subarray(e + 2 + n + 2);
      }
      resolve({ status, head, body: Buffer.concat(parts), clean });
    });
  });
}

async function relayOrigin(seen: string[]): Promise<number> {
  return rawOrigin((s, head) => {
    const path = head.split(' ')[1]!;
    const range = /\r\nrange: *([^\r]*)/i.exec(head)?.[1];
    seen.push(`${path} ${range ?? '-'}`);
    const common = 'Cache-Control: no-store\r\nETag: "v1"\r\nContent-Type: application/octet-stream\r\n';
    if (!range) {
      s.end(Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\n${common}Content-Length: ${SIZE}\r\nConnection: close\r\n\r\n`), BODY]));
      return;
    }
    const row = rows[Number(path.slice(1))]!;
    const part = BODY.subarray(row.from, row.from + row.n);
    const h = `HTTP/1.1 206 Partial Content\r\n${common}Content-Range: ${row.contentRange}\r\n`;
    if (row.framing === 'length') s.end(Buffer.concat([Buffer.from(`${h}Content-Length: ${part.length}\r\nConnection: close\r\n\r\n`), part]));
    else if (row.framing === 'close') s.end(Buffer.concat([Buffer.from(`${h}Connection: close\r\n\r\n`), part]));
    else s.end(Buffer.concat([Buffer.from(`${h}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n0\r\n\r\n')]));
  });
}

describe('206 passed through to a ranged reader of an unstorable object', () => {
  it('is cut when its body is shorter or longer than its Content-Range, however the unit is spelled', async () => {
    const seen: string[] = [];
    const port = await relayOrigin(seen);
    const g = await startGateway(['--cache-dir', await tempDir('estuary-atk-map9-'), '--upstream', `default=http://127.0.0.1:${port}`, '--mem-object-max', '0']);
    const bad: string[] = [];
    for (const [i, row] of rows.entries()) {
      const r = await get(g.port, `/${i}`, { Range: 'bytes=100-199' });
      // Cut: the connection ends without a clean end of the body, or before any answer, or the
      // gateway answers 502 itself. Complete: a 206 whose body ended cleanly.
      const got = r.status === 502 || r.status === 0 || !r.clean ? 'cut' : 'complete';
      const exact = r.body.equals(BODY.subarray(100, 100 + Math.min(row.n, 100)));
      if ((row.want === 'complete' && (r.status !== 206 || !exact)) || got !== row.want) {
        bad.push(`${row.name} (Content-Range: ${row.contentRange}, ${row.n} bytes): ${r.status}, ${r.body.length} bytes, ${got}; want ${row.want}`);
      }
    }
    expect(bad, `${bad.join('\n')}\norigin saw: ${seen.join(', ')}`).toEqual([]);
  }, 90_000);

  it('an HTTP/1.0 client sees a short or long one aborted, never a clean close', async () => {
    const seen: string[] = [];
    const port = await relayOrigin(seen);
    const g = await startGateway(['--cache-dir', await tempDir('estuary-atk-map9-'), '--upstream', `default=http://127.0.0.1:${port}`, '--mem-object-max', '0']);
    const bad: string[] = [];
    for (const [i, row] of rows.entries()) {
      if (row.want !== 'cut') continue;
      const r = await rawRequest(g.port, `GET /${i} HTTP/1.0\r\nHost: origin.test\r\nRange: bytes=100-199\r\n\r\n`);
      if (r.status === 206 && r.error === undefined) bad.push(`${row.name} (Content-Range: ${row.contentRange}): 206 with ${r.body.length} bytes and a clean close`);
    }
    expect(bad, bad.join('\n')).toEqual([]);
  }, 90_000);
});
