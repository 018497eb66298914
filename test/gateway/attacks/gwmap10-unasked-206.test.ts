// Attack: an origin that answers a request that asked no range with a 206 (chunked, cacheable),
// and a 200 that carries a Content-Range. Reverse proxy.
//
// RFC 9110 §15.3.7: a 206 is the answer to a Range request; RFC 9111 §3.3/§3.4: a cache may store
// a partial response only as a part, and never serves it as a whole 200. RFC 9110 §14.4: a
// Content-Range on a 200 has no meaning.
// Held (regression test). Expected: a later plain GET (and a later range read) never gets the 100-byte part as the whole
// object; a 200 with Content-Range is served whole and exact.

import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { pattern, rawOrigin, rawRequest, sleep, startGateway } from './gateway-lib.ts';

afterAll(runTeardowns);

const BODY = pattern(1000, 5);

describe('a 206 the client did not ask for', () => {
  it('is never stored or served as the whole object', async () => {
    const seen: string[] = [];
    const port = await rawOrigin((s, head) => {
      const path = head.split(' ')[1]!;
      seen.push(`${path} ${/\r\nrange: *([^\r]*)/i.exec(head)?.[1] ?? '-'}`);
      const common = 'Cache-Control: max-age=600\r\nETag: "p1"\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n';
      if (path === '/part') {
        const part = BODY.subarray(0, 100);
        s.end(Buffer.concat([Buffer.from(`HTTP/1.1 206 Partial Content\r\n${common}Content-Range: bytes 0-99/1000\r\nTransfer-Encoding: chunked\r\n\r\n64\r\n`), part, Buffer.from('\r\n0\r\n\r\n')]));
      } else {
        s.end(Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\n${common}Content-Range: bytes 0-99/1000\r\nTransfer-Encoding: chunked\r\n\r\n3e8\r\n`), BODY, Buffer.from('\r\n0\r\n\r\n')]));
      }
    });
    const g = await startGateway(['--cache-dir', await tempDir('estuary-atk-map10-'), '--upstream', `default=http://127.0.0.1:${port}`]);
    const bad: string[] = [];
    const first = await rawRequest(g.port, 'GET /part HTTP/1.1\r\nHost: o.test\r\nConnection: close\r\n\r\n');
    await sleep(300);
    const again = await rawRequest(g.port, 'GET /part HTTP/1.1\r\nHost: o.test\r\nConnection: close\r\n\r\n');
    if (again.status === 200) bad.push(`plain GET after an unasked 206: 200 with ${again.body.length} bytes (first answer ${first.status})`);
    const ranged = await rawRequest(g.port, 'GET /part HTTP/1.1\r\nHost: o.test\r\nRange: bytes=500-599\r\nConnection: close\r\n\r\n');
    // The origin's own 206 relayed (Content-Range bytes 0-99) is acceptable: it names what it holds.
    const cr = /\r\ncontent-range: *([^\r]*)/i.exec(ranged.head)?.[1];
    if (ranged.status !== 206 || (cr !== 'bytes 500-599/1000' && cr !== 'bytes 0-99/1000')) bad.push(`range 500-599 after an unasked 206: ${ranged.status}, Content-Range ${String(cr)}`);
    await rawRequest(g.port, 'GET /whole HTTP/1.1\r\nHost: o.test\r\nConnection: close\r\n\r\n');
    await sleep(300);
    const w = await rawRequest(g.port, 'GET /whole HTTP/1.1\r\nHost: o.test\r\nConnection: close\r\n\r\n');
    if (w.status !== 200 || !w.body.equals(BODY)) bad.push(`200 with Content-Range, stored: ${w.status} with ${w.body.length} bytes`);
    const wr = await rawRequest(g.port, 'GET /whole HTTP/1.1\r\nHost: o.test\r\nRange: bytes=500-599\r\nConnection: close\r\n\r\n');
    if (wr.status !== 206 || !wr.body.equals(BODY.subarray(500, 600))) bad.push(`range of a stored 200 with Content-Range: ${wr.status} with ${wr.body.length} bytes`);
    expect(bad, `${bad.join('\n')}\norigin saw: ${seen.join(', ')}`).toEqual([]);
  }, 60_000);
});
