// Hostile stored content. docs/CACHING.md: "Stored responses keep every end-to-end header the
// upstream sent"; "a 304 is merged into the stored headers (RFC 9111 §3.2)"; the trailer is
// "metadata JSON (UTF-8)" read back at every start.

import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp.ts';
import { rawOrigin, rawRequest, startGateway } from './gateway-lib.ts';
import { get, origin } from './disk-lib.ts';

/** The header lines of a raw reply head, minus those the gateway sets per answer. */
function originLines(head: string): string[] {
  return head
    .split('\r\n')
    .slice(1)
    .filter((l) => /^(x-|set-cookie)/i.test(l))
    .map((l) => l.replace(/^[^:]+/, (n) => n.toLowerCase()));
}

describe('stored headers', () => {
  it('latin1 and UTF-8 bytes and a Set-Cookie list come back byte for byte, after a restart too', { timeout: 60_000 }, async () => {
    const lines = [
      'X-Latin1: caf\xe9 \xff\xa0end',
      'X-Utf8: caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80',
      'Set-Cookie: a=1; Path=/',
      'Set-Cookie: b=\xe9; Path=/',
    ];
    const up = await rawOrigin((s) => {
      const head = ['HTTP/1.1 200 OK', 'Content-Length: 4', 'Cache-Control: public, max-age=600', ...lines].join('\r\n');
      s.end(Buffer.concat([Buffer.from(`${head}\r\n\r\n`, 'latin1'), Buffer.from('body')]));
    });
    const dir = await tempDir('atk-gwdisk-');
    const args = ['--upstream', `o=http://127.0.0.1:${up}`, '--cache-dir', dir];
    let gw = await startGateway(args);
    const req = 'GET /h HTTP/1.1\r\nHost: o\r\nConnection: close\r\n\r\n';
    const miss = await rawRequest(gw.port, req);
    const hit = await rawRequest(gw.port, req);
    await gw.child.stop();
    gw = await startGateway(args);
    const disk = await rawRequest(gw.port, req);
    expect(disk.head).toMatch(/cache-status: [^\r]*hit/i);
    for (const r of [miss, hit, disk]) {
      expect(r.body.toString()).toBe('body');
      expect(originLines(r.head)).toEqual(originLines(`status\r\n${lines.join('\r\n')}`));
    }
  });

  it('304s that each bring new header fields do not grow the stored head past what an origin may send', { timeout: 60_000 }, async () => {
    // Each revalidation answers 304 with 12 KiB of fields never seen before (an origin stamping
    // per-response fields: trace ids, server timings). Merged without a bound, the stored head
    // grows by that much each time: after ten, a 120 KiB head that Node's own client (16 KiB
    // limit, the same one the gateway applies to origins) cannot read, and after ninety a trailer
    // over the 1 MiB a start-up accepts, so the entry is dropped at the next start.
    let round = 0;
    const up = await origin((req, res) => {
      if (req.headers['if-none-match'] === '"v1"') {
        round++;
        const fields: Record<string, string> = { etag: '"v1"', 'cache-control': 'max-age=0' };
        for (let i = 0; i < 60; i++) fields[`x-trace-${round}-${i}`] = 'x'.repeat(180);
        res.writeHead(304, fields);
        res.end();
        return;
      }
      res.writeHead(200, { etag: '"v1"', 'cache-control': 'max-age=0', 'content-length': '4' });
      res.end('body');
    });
    const dir = await tempDir('atk-gwdisk-');
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${up}`, '--cache-dir', dir]);
    expect((await get(gw.port, '/r', { host: 'o' })).status).toBe(200);
    const outcomes: string[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await get(gw.port, '/r', { host: 'o' });
      outcomes.push(`${r.status}${r.error ? ` ${r.error}` : ''}`);
    }
    expect(round).toBeGreaterThanOrEqual(9);
    expect(outcomes).toEqual(Array(10).fill('200'));
  });
});
